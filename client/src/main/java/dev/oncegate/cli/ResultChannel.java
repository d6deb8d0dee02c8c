package dev.oncegate.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.UUID;

/**
 * Where {@code run} writes its result line besides stderr, so that a script reads it without
 * parsing the wrapped command's output: a file ({@code --result-file}), replaced atomically, or
 * a descriptor the caller handed down ({@code --result-fd}). Either is checked before anything
 * connects, and written at most once.
 *
 * <p>A file is written to a temporary file in the same directory, forced to disk and renamed
 * over PATH, so PATH only ever holds a complete line; a file left at PATH by an earlier run is
 * removed when this one starts, so that afterwards PATH is this run's result or nothing. A
 * descriptor is reopened through {@code /proc/self/fd/N} (Linux) when checked, and gets the line
 * in one write.
 *
 * <p>Not thread-safe: the main thread checks and writes it.
 */
final class ResultChannel implements AutoCloseable {

    /** Access mode bits and the close-on-exec flag of {@code /proc/self/fdinfo/N}'s {@code flags} (octal). */
    private static final int O_ACCMODE = 03;
    private static final int O_CLOEXEC = 02000000;

    /** Where a line goes. */
    private interface Sink {
        void accept(byte[] line) throws IOException;
    }

    private final String name;
    private final Sink sink;
    private final AutoCloseable resource;
    private boolean written;

    private ResultChannel(String name, Sink sink, AutoCloseable resource) {
        this.name = name;
        this.sink = sink;
        this.resource = resource;
    }

    /** No result channel: stderr only. */
    static ResultChannel none() {
        return new ResultChannel("nowhere", line -> { }, null);
    }

    /**
     * {@code --result-file PATH}: its directory must exist and be writable; a file already at
     * PATH is removed now.
     *
     * @throws IllegalArgumentException naming the option when the path cannot be used (exit 2)
     */
    static ResultChannel file(Path path) {
        Path target = path.toAbsolutePath().normalize();
        Path dir = target.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--result-file: the directory of " + path + " does not exist");
        }
        if (Files.isDirectory(target)) {
            throw new IllegalArgumentException("--result-file: " + path + " is a directory");
        }
        if (!Files.isWritable(dir)) {
            throw new IllegalArgumentException("--result-file: cannot create files in " + dir);
        }
        try {
            Files.deleteIfExists(target);
        } catch (IOException e) {
            throw new IllegalArgumentException("--result-file: cannot remove the earlier " + path + " (" + e + ")", e);
        }
        return new ResultChannel("to " + target, line -> replace(target, line), null);
    }

    /**
     * {@code --result-fd N}: N must be a descriptor this process inherited open for writing.
     *
     * @throws IllegalArgumentException naming the option when it is not (exit 2)
     */
    static ResultChannel descriptor(int fd) {
        String usage = " (hand it down from the shell, e.g. `oncegate run --result-fd 3 … 3>result.json`)";
        if (fd < 1) {
            throw new IllegalArgumentException("--result-fd: " + fd + " is not an output descriptor" + usage);
        }
        Path fds = Path.of("/proc/self/fd");
        if (!Files.isDirectory(fds)) {
            throw new IllegalArgumentException("--result-fd: needs /proc/self/fd (Linux); use --result-file instead");
        }
        String info;
        try {
            info = Files.readString(Path.of("/proc/self/fdinfo", Integer.toString(fd)), StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("--result-fd: descriptor " + fd + " is not open" + usage, e);
        } catch (IOException e) {
            throw new IllegalArgumentException("--result-fd: cannot inspect descriptor " + fd + " (" + e + ")", e);
        }
        int flags = flags(info);
        if ((flags & O_CLOEXEC) != 0) {
            // Nothing inherited across exec has close-on-exec set: this one was opened by this JVM.
            throw new IllegalArgumentException("--result-fd: descriptor " + fd + " is not open" + usage);
        }
        if ((flags & O_ACCMODE) == 0) {
            throw new IllegalArgumentException("--result-fd: descriptor " + fd + " is open for reading only" + usage);
        }
        OutputStream out;
        try {
            out = Files.newOutputStream(fds.resolve(Integer.toString(fd)), StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new IllegalArgumentException("--result-fd: cannot write to descriptor " + fd + " (" + e + ")", e);
        }
        return new ResultChannel("to descriptor " + fd, line -> {
            out.write(line);
            out.flush();
        }, out);
    }

    private static int flags(String fdinfo) {
        for (String line : fdinfo.split("\n")) {
            if (line.startsWith("flags:")) {
                return Integer.parseInt(line.substring("flags:".length()).strip(), 8);
            }
        }
        throw new IllegalArgumentException("--result-fd: /proc/self/fdinfo has no flags line");
    }

    /** Writes {@code line} to a temporary file beside {@code path}, forces it to disk and renames it over {@code path}. */
    private static void replace(Path path, byte[] line) throws IOException {
        Path tmp = path.resolveSibling("." + path.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer bytes = ByteBuffer.wrap(line);
                while (bytes.hasRemaining()) {
                    out.write(bytes);
                }
                out.force(true);
            }
            Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * Writes {@code line} and a newline, once: later calls do nothing. A failure is reported on
     * stderr and does not change run's exit code, which says what the records say.
     */
    void write(String line) {
        if (written) {
            return;
        }
        written = true;
        try {
            sink.accept((line + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            System.err.println("oncegate run: could not write the result " + name + ": " + e);
        }
    }

    /** Releases the descriptor this channel reopened, if any. */
    @Override
    public void close() {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            System.err.println("oncegate run: could not close the result channel " + name + ": " + e);
        }
    }
}
