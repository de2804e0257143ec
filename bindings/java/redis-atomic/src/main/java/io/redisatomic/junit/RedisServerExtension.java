package io.redisatomic.junit;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The extension behind {@link RedisServer}: one {@link EmbeddedRedis} per test class, kept in the
 * class's store (closed by JUnit when the class is done), injected into constructors, lifecycle
 * methods and tests that take an {@code EmbeddedRedis} parameter.
 */
public final class RedisServerExtension implements ParameterResolver {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(RedisServerExtension.class);

    /** Closes the server when the class's store is closed. */
    private record Resource(EmbeddedRedis server) implements AutoCloseable {
        @Override
        public void close() {
            server.close();
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext c) {
        return p.getParameter().getType() == EmbeddedRedis.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext c) {
        ExtensionContext root = classContext(c);
        return root.getStore(NS).computeIfAbsent("server", k -> start(), Resource.class).server();
    }

    private static ExtensionContext classContext(ExtensionContext c) {
        ExtensionContext x = c;
        while (x.getTestMethod().isPresent() && x.getParent().isPresent()) {
            x = x.getParent().get();
        }
        return x;
    }

    private static Resource start() {
        try {
            return new Resource(EmbeddedRedis.start());
        } catch (Exception e) {
            throw new ParameterResolutionException("could not start " + EmbeddedRedis.binary() + ": " + e.getMessage(), e);
        }
    }
}
