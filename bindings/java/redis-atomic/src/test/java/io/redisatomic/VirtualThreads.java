package io.redisatomic;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A thread per task: virtual on a JDK that has them (21+), platform threads on 17. */
final class VirtualThreads {
    private VirtualThreads() {
    }

    static ExecutorService perTaskExecutor() {
        try {
            return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (ReflectiveOperationException e) {
            return Executors.newCachedThreadPool();
        }
    }
}
