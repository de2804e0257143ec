//! Users' own scripts: a folder loaded at run time as a `ScriptSet`, each script called by name
//! through `Client.call`, on the library's one call path (`EVALSHA` or `FCALL` of the user's
//! library, `NOSCRIPT` recovery, the header's retry class, the slot check).
//!
//! The library leaks each loaded definition so it is `'static` like the built-in scripts: load
//! a folder once per process, at start-up, not per request.

use crate::convert::Reply;
use crate::errors::Error;
use pyo3::prelude::*;
use pyo3::types::PyList;
use redis_atomic::script::{DynScript, RawReply, ScriptSet as Set};

/// The scripts of one folder, composed into one Function library.
#[pyclass(frozen, module = "redis_atomic")]
pub struct ScriptSet {
    inner: Set,
}

#[pymethods]
impl ScriptSet {
    /// Loads every script of `dir` (each checked against its header; fragments from
    /// `dir/include`) as library `library` (`library_v<N>`, N from `dir/library.version`).
    #[staticmethod]
    #[pyo3(signature = (dir, library))]
    fn load_dir(py: Python<'_>, dir: std::path::PathBuf, library: &str) -> PyResult<Self> {
        let inner = py
            .detach(|| Set::load_dir(&dir, library))
            .map_err(|e| Error::Folder(e.to_string()).into_py(py))?;
        Ok(ScriptSet { inner })
    }

    /// The script named `name` (its file name without `.lua`); `KeyError` if there is none.
    fn __getitem__(&self, name: &str) -> PyResult<Script> {
        self.inner
            .get(name)
            .map(|def| Script { def })
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name.to_string()))
    }

    fn __contains__(&self, name: &str) -> bool {
        self.inner.get(name).is_some()
    }

    fn __len__(&self) -> usize {
        self.inner.scripts().len()
    }

    /// Every script's name, sorted.
    #[getter]
    fn names(&self) -> Vec<&'static str> {
        self.inner.scripts().iter().map(|s| s.name).collect()
    }

    /// The Function library's name (`library_v<N>`).
    #[getter]
    fn library(&self) -> &'static str {
        self.inner.library().name
    }

    fn __repr__(&self) -> String {
        format!(
            "ScriptSet(library={:?}, scripts={:?})",
            self.inner.library().name,
            self.names()
        )
    }
}

/// One script of a [`ScriptSet`]: what its header declares.
#[pyclass(frozen, module = "redis_atomic")]
pub struct Script {
    pub(crate) def: &'static DynScript<RawReply>,
}

#[pymethods]
impl Script {
    /// The file name without `.lua`.
    #[getter]
    fn name(&self) -> &'static str {
        self.def.name
    }
    /// The header's version.
    #[getter]
    fn version(&self) -> u32 {
        self.def.version
    }
    /// The names of `KEYS[1..]` (a last name ending in `...` takes any number more).
    #[getter]
    fn keys(&self) -> Vec<&'static str> {
        self.def.keys.to_vec()
    }
    /// The names of `ARGV[1..]`.
    #[getter]
    fn args(&self) -> Vec<&'static str> {
        self.def.args.to_vec()
    }
    /// The status words its replies may start with.
    #[getter]
    fn statuses(&self) -> Vec<&'static str> {
        self.def.statuses.to_vec()
    }
    /// Whether a resend after an unknown outcome is safe (`retry: safe` in its header).
    #[getter]
    fn retry_safe(&self) -> bool {
        self.def.retry == redis_atomic::RetryClass::Safe
    }
    fn __repr__(&self) -> String {
        format!(
            "Script(name={:?}, version={})",
            self.def.name, self.def.version
        )
    }
}

/// A script's reply: its status word and the items after it, as native values.
#[pyclass(frozen, module = "redis_atomic")]
pub struct ScriptReply {
    status: String,
    fields: Py<PyList>,
}

impl ScriptReply {
    /// Not converted yet (no GIL on the runtime's threads): see `IntoPyObject` below.
    pub(crate) fn of(raw: RawReply) -> PendingReply {
        PendingReply(raw)
    }
}

/// A [`RawReply`] on its way to Python.
pub(crate) struct PendingReply(RawReply);

impl<'py> IntoPyObject<'py> for PendingReply {
    type Target = ScriptReply;
    type Output = Bound<'py, ScriptReply>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ScriptReply>> {
        let items = self
            .0
            .fields
            .into_iter()
            .map(|v| Reply(v).into_pyobject(py))
            .collect::<PyResult<Vec<_>>>()?;
        let fields = PyList::new(py, items)?.unbind();
        Bound::new(
            py,
            ScriptReply {
                status: self.0.status,
                fields,
            },
        )
    }
}

#[pymethods]
impl ScriptReply {
    #[new]
    #[pyo3(signature = (status, fields))]
    fn new(py: Python<'_>, status: String, fields: &Bound<'_, PyAny>) -> PyResult<Self> {
        let items: Vec<Bound<'_, PyAny>> = fields.try_iter()?.collect::<PyResult<_>>()?;
        Ok(ScriptReply {
            status,
            fields: PyList::new(py, items)?.unbind(),
        })
    }
    /// The status word (one the script's header declares).
    #[getter]
    fn status(&self) -> &str {
        &self.status
    }
    /// The items after it: `int`, `bytes`, `str` (status replies), `list`, `dict`, `None`, ...
    /// A copy: the reply itself does not change.
    #[getter]
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<Bound<'py, PyAny>> = self.fields.bind(py).iter().collect();
        PyList::new(py, items)
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("status", "fields")
    }
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<ScriptReply>() else {
            return Ok(false);
        };
        let other = other.get();
        Ok(self.status == other.status && self.fields.bind(py).eq(other.fields.bind(py))?)
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ScriptReply(status={:?}, fields={})",
            self.status,
            self.fields.bind(py).repr()?
        ))
    }
}
