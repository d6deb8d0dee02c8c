package dev.oncegate.bench;

/**
 * The floor of the startup phase: a JVM that starts, prints one line and exits. {@link StartupPhase}
 * copies this class file into a directory of its own and runs it with a bare {@code java -cp DIR}.
 * Stateless; thread-safe.
 */
public final class Hello {

    private Hello() {
    }

    public static void main(String[] args) {
        System.out.println("hello");
    }
}
