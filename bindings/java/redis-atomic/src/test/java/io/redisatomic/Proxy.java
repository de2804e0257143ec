package io.redisatomic;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TCP proxy in front of a real server, to stage a connection lost after the server ran a
 * request: after {@link #dropNextReply}, the next bytes the server sends back close that
 * connection's both sides instead of reaching the client (the request ran; its reply is lost).
 * Connections made after that pass everything, so a client that reconnects and replays the
 * request would be seen doing it.
 */
final class Proxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicBoolean dropNext = new AtomicBoolean();
    private final AtomicBoolean dropExec = new AtomicBoolean();
    private final AtomicBoolean execSent = new AtomicBoolean();

    Proxy(int target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::acceptLoop, "proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** Loses the next reply (and its connection). */
    void dropNextReply() {
        dropNext.set(true);
    }

    /** Loses the next EXEC's reply (the first array the server sends after an EXEC passed) and its connection. */
    void dropExecReply() {
        dropExec.set(true);
    }

    String url() {
        return "redis://127.0.0.1:" + listener.getLocalPort();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
                sockets.add(client);
                sockets.add(server);
                pump(client, server, false);
                pump(server, client, true);
            } catch (IOException e) {
                return; // the listener was closed
            }
        }
    }

    private void pump(Socket from, Socket to, boolean replies) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    if (replies && dropNext.compareAndSet(true, false)) {
                        break;
                    }
                    if (!replies && dropExec.get() && new String(buf, 0, n, java.nio.charset.StandardCharsets.ISO_8859_1).contains("\r\nEXEC\r\n")) {
                        execSent.set(true);
                    }
                    if (replies && execSent.get() && contains(buf, n, (byte) '*') && execSent.compareAndSet(true, false)) {
                        dropExec.set(false);
                        break;
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // a side closed: close both below
            }
            closeQuietly(from);
            closeQuietly(to);
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static boolean contains(byte[] buf, int n, byte b) {
        for (int i = 0; i < n; i++) {
            if (buf[i] == b) {
                return true;
            }
        }
        return false;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        sockets.forEach(Proxy::closeQuietly);
    }
}
