package io.redisatomic;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.BufferUnderflowException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A stored response: status, selected headers, and a binary-safe body or a reference to one. It is
 * stored as the Rust library encodes it, so every face replays what any face stored: big-endian
 * {@code "R1"}, status u16, header count u16, per header name length u16 + name + value length u32
 * + value, then a body kind byte (0 bytes, 1 reference) and the body to the end.
 */
public record Response(int status, List<Header> headers, Body body) {
    public Response {
        if (status < 0 || status > 0xffff) {
            throw new BadArgumentException("status must be in 0..65535, got " + status);
        }
        headers = List.copyOf(headers);
        if (headers.size() > 0xffff || body == null) {
            throw new BadArgumentException("response has too many headers, or no body");
        }
    }

    /** A response with {@code status} and {@code body}, no headers. */
    public static Response of(int status, byte[] body) {
        return new Response(status, List.of(), new Body.Bytes(body));
    }

    /** With one more header. */
    public Response withHeader(String name, String value) {
        List<Header> h = new ArrayList<>(headers);
        h.add(new Header(name, value.getBytes(StandardCharsets.UTF_8)));
        return new Response(status, h, body);
    }

    /** The body's bytes, or null for a reference. */
    public byte[] bodyBytes() {
        return body instanceof Body.Bytes b ? b.bytes() : null;
    }

    /** One header: its name and raw value. */
    public record Header(String name, byte[] value) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Header h && h.name.equals(name) && Arrays.equals(h.value, value);
        }

        @Override
        public int hashCode() {
            return name.hashCode() * 31 + Arrays.hashCode(value);
        }
    }

    /** The body: its bytes, or a reference to where it is kept (for large ones). */
    public sealed interface Body permits Body.Bytes, Body.Reference {
        record Bytes(byte[] bytes) implements Body {
            @Override
            public boolean equals(Object o) {
                return o instanceof Bytes b && Arrays.equals(b.bytes, bytes);
            }

            @Override
            public int hashCode() {
                return Arrays.hashCode(bytes);
            }
        }

        record Reference(String reference) implements Body {
        }
    }

    byte[] encode() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer head = ByteBuffer.allocate(6).put((byte) 'R').put((byte) '1').putShort((short) status)
                .putShort((short) headers.size());
        out.writeBytes(head.array());
        for (Header h : headers) {
            byte[] name = h.name().getBytes(StandardCharsets.UTF_8);
            if (name.length > 0xffff) {
                throw new BadArgumentException("response has too many or too large headers");
            }
            out.writeBytes(ByteBuffer.allocate(2).putShort((short) name.length).array());
            out.writeBytes(name);
            out.writeBytes(ByteBuffer.allocate(4).putInt(h.value().length).array());
            out.writeBytes(h.value());
        }
        if (body instanceof Body.Bytes b) {
            out.write(0);
            out.writeBytes(b.bytes());
        } else {
            out.write(1);
            out.writeBytes(((Body.Reference) body).reference().getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    static Response decode(byte[] bytes) {
        try {
            ByteBuffer r = ByteBuffer.wrap(bytes);
            if (r.get() != 'R' || r.get() != '1') {
                throw bad("not an R1 response");
            }
            int status = Short.toUnsignedInt(r.getShort());
            int count = Short.toUnsignedInt(r.getShort());
            List<Header> headers = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String name = utf8(take(r, Short.toUnsignedInt(r.getShort())));
                long len = Integer.toUnsignedLong(r.getInt());
                headers.add(new Header(name, take(r, len > Integer.MAX_VALUE ? -1 : (int) len)));
            }
            int kind = r.get();
            byte[] rest = take(r, r.remaining());
            Body body = switch (kind) {
                case 0 -> new Body.Bytes(rest);
                case 1 -> new Body.Reference(utf8(rest));
                default -> throw bad("body kind");
            };
            return new Response(status, headers, body);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw bad("truncated");
        }
    }

    private static byte[] take(ByteBuffer r, int n) {
        if (n < 0 || n > r.remaining()) {
            throw new BufferUnderflowException();
        }
        byte[] b = new byte[n];
        r.get(b);
        return b;
    }

    private static String utf8(byte[] b) {
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            throw bad("not UTF-8");
        }
    }

    private static BadReplyException bad(String detail) {
        return new BadReplyException("idem_begin: stored response: " + detail);
    }
}
