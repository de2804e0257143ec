// Builds the native addon and, on request, its generated TypeScript declarations.
//
//   node build.mjs [--release] [--types | --check-types]
//
// Why not `napi build`: it always passes `--target <triple>`, which puts every dependency in
// target/<triple>/ and so compiles the whole dependency tree a second time next to the
// workspace's own build. This script runs plain `cargo build -p redis-atomic-node` instead (the
// workspace's target dir and profile: `make test` reuses every artifact `cargo test` built, and
// only this crate compiles), then does what `napi build` would: copies the cdylib to
// redis-atomic.node and, with --types, renders index.d.ts with @napi-rs/cli's own generator
// (`generateTypeDef`) from the type definitions napi-derive writes while compiling, with
// errors.d.ts (the declarations of errors.js) as its header. --check-types renders it and fails
// if the committed index.d.ts differs (it is generated, never edited by hand).
//
// Without --types nothing but cargo and node is needed: `npm install` of this folder on a fresh
// machine (Rust toolchain present) builds the release addon with this script alone.

import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const args = new Set(process.argv.slice(2))
const known = ['--release', '--types', '--check-types']
for (const a of args) {
  if (!known.includes(a)) fail(`unknown option ${a} (${known.join(', ')})`)
}
const release = args.has('--release')
const types = args.has('--types') || args.has('--check-types')
const CRATE = 'redis-atomic-node'

function fail(msg) {
  console.error(`build.mjs: ${msg}`)
  process.exit(1)
}

function cargoTargetDir() {
  const out = spawnSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], {
    cwd: here,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  })
  if (out.status !== 0) fail(`cargo metadata failed (is a Rust toolchain installed?)\n${out.stderr}`)
  return JSON.parse(out.stdout).target_directory
}

function build(typeDir) {
  const env = { ...process.env }
  if (typeDir) {
    rmSync(typeDir, { recursive: true, force: true })
    mkdirSync(typeDir, { recursive: true })
    env.NAPI_TYPE_DEF_TMP_FOLDER = typeDir
    // The definitions are written while the crate compiles: make sure it does.
    env.NAPI_FORCE_BUILD_REDIS_ATOMIC_NODE = String(Date.now())
  }
  const cmd = ['build', '-p', CRATE, '--message-format=json-render-diagnostics']
  if (release) cmd.push('--release')
  console.error(`build.mjs: cargo ${cmd.join(' ')}${release ? '' : ' (dev profile)'}`)
  const out = spawnSync('cargo', cmd, {
    cwd: here,
    env,
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  if (out.status !== 0) fail(`cargo build failed (exit ${out.status})`)
  let lib
  for (const line of out.stdout.split('\n')) {
    if (!line.startsWith('{')) continue
    const msg = JSON.parse(line)
    if (msg.reason === 'compiler-artifact' && msg.target?.kind?.includes('cdylib')) {
      lib = msg.filenames.find((f) => /\.(so|dylib|dll)$/.test(f))
    }
  }
  if (!lib) fail('cargo reported no cdylib for redis-atomic-node')
  copyFileSync(lib, join(here, 'redis-atomic.node'))
  console.error(`build.mjs: ${lib} -> redis-atomic.node`)
}

async function declarations(typeDir) {
  let generateTypeDef
  try {
    ;({ generateTypeDef } = await import('@napi-rs/cli'))
  } catch {
    fail('--types needs the dev dependencies: npm ci --ignore-scripts')
  }
  // String enums as TypeScript unions ('gcra' | …), not `const enum`s.
  const { dts } = await generateTypeDef({
    typeDefDir: typeDir,
    cwd: here,
    dtsHeaderFile: 'errors.d.ts',
    constEnum: false,
  })
  const path = join(here, 'index.d.ts')
  if (args.has('--check-types')) {
    const committed = existsSync(path) ? readFileSync(path, 'utf8') : ''
    if (committed !== dts) {
      writeFileSync(join(typeDir, 'index.d.ts'), dts)
      fail(
        `index.d.ts is not what the Rust sources generate: run \`npm run build:debug\` in ` +
          `bindings/node and commit it (generated copy: ${join(typeDir, 'index.d.ts')})`,
      )
    }
    console.error('build.mjs: index.d.ts is current')
  } else {
    writeFileSync(path, dts)
    console.error('build.mjs: wrote index.d.ts')
  }
}

const typeDir = types ? join(cargoTargetDir(), 'napi-rs', `${CRATE}-types`) : null
build(typeDir)
if (typeDir) await declarations(typeDir)
