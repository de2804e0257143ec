#!/bin/sh
# The Java library's driver for `redis-atomic verify --driver` (docs/verify.md, "Drivers"):
# io.redisatomic.driver.VerifyDriver, a class of the library's tests, on their classpath. Build
# it first (once, from the repository's root):
#   cd bindings/java && mvn -q -pl redis-atomic test-compile dependency:build-classpath \
#       -Dmdep.outputFile=target/driver.classpath
# C1 only and the serial collector: a short-lived process starts sooner on a busy machine.
t="$(dirname "$0")/../../bindings/java/redis-atomic/target"
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -cp "$t/test-classes:$t/classes:$(cat "$t/driver.classpath")" io.redisatomic.driver.VerifyDriver
