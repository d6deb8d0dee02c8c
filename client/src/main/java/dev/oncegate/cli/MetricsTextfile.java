package dev.oncegate.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Prometheus textfile-collector file (node_exporter's {@code --collector.textfile.directory})
 * that every {@code oncegate run --metrics-textfile} on a host adds its counts to.
 *
 * <p><b>Format.</b> The Prometheus text exposition format 0.0.4, as node_exporter reads it: per
 * family a {@code # HELP} and a {@code # TYPE} line, then its samples, one per label set, labels
 * sorted by name, no timestamps. Three kinds of family: {@code counter} (a name ending in
 * {@code _total}) and {@code summary} (samples {@code NAME_count} and {@code NAME_sum}, no
 * quantiles), whose values this file <em>accumulates</em> across runs, and {@code gauge}, whose
 * value the last update <em>sets</em>. A family or series an update does not mention is kept as
 * it is.
 *
 * <p><b>Updates never lose an increment and never show a half-written file.</b> {@link #update}
 * takes an exclusive {@link FileChannel#lock} on the sidecar {@code PATH.lock} (created once, never
 * deleted: deleting a lock file lets two processes lock two different files), reads the file,
 * adds, writes {@code PATH.<pid>.tmp} in the same directory, forces it to disk and renames it over
 * {@code PATH} atomically (node_exporter's convention: it reads only {@code *.prom}, so neither the
 * lock nor the temporary file is ever collected). Under the lock any other {@code PATH.<n>.tmp}
 * is a leftover of a process killed mid-write, and is removed. The new file keeps the old one's
 * permissions (node_exporter must still read it).
 *
 * <p>A file that does not parse as this format (edited by hand, written by something else) is
 * moved aside to {@code PATH.unparsable} and started afresh: Prometheus takes the counters'
 * return to zero for a reset, as after a restart.
 *
 * <p>Thread-safe: updates from threads of one process take turns on a monitor (a file lock is
 * held per process, not per thread), processes on the lock file.
 */
final class MetricsTextfile {

    /** The kinds of family this file holds. */
    enum Type {
        COUNTER, SUMMARY, GAUGE;

        String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        static Type fromWireName(String text) {
            for (Type t : values()) {
                if (t.wireName().equals(text)) {
                    return t;
                }
            }
            throw new IllegalArgumentException("a family of type '" + text + "', which oncegate never writes");
        }
    }

    /**
     * One value to add (counter, summary) or set (gauge).
     *
     * @param family the family's name ({@code oncegate_decisions_total}, {@code oncegate_boundary_duration_seconds})
     * @param type   its type
     * @param help   its help text
     * @param sample the sample's name: the family's, or for a summary the family's plus {@code _count} or {@code _sum}
     * @param labels label names and values
     * @param value  the amount to add, or the gauge's new value
     */
    record Sample(String family, Type type, String help, String sample, Map<String, String> labels, double value) {
        Sample {
            Objects.requireNonNull(family, "family");
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(help, "help");
            labels = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(labels));
            if (!sample.equals(family) && !(type == Type.SUMMARY && (sample.equals(family + "_count") || sample.equals(family + "_sum")))) {
                throw new IllegalArgumentException("sample " + sample + " does not belong to the " + type.wireName()
                        + " family " + family);
            }
            if (type == Type.COUNTER && !family.endsWith("_total")) {
                throw new IllegalArgumentException("counter " + family + ": a counter's name ends in _total");
            }
        }

        /** The sample as the file writes it, less its value: {@code name{a="x",b="y"}}. */
        String series() {
            if (labels.isEmpty()) {
                return sample;
            }
            StringBuilder out = new StringBuilder(sample).append('{');
            labels.forEach((name, value) -> out.append(name).append("=\"").append(escapeLabel(value)).append("\","));
            out.setCharAt(out.length() - 1, '}');
            return out.toString();
        }
    }

    /** The file's families, in the order they first appeared, each with its series in sorted order. */
    static final class Contents {
        private final Map<String, Family> families = new LinkedHashMap<>();

        private record Family(Type type, String help, TreeMap<String, Double> series) {
        }

        /** Adds (counter, summary) or sets (gauge) {@code sample}; its family's help and type become the sample's. */
        void apply(Sample sample) {
            Family old = families.get(sample.family());
            TreeMap<String, Double> series = old == null || old.type() != sample.type() ? new TreeMap<>() : old.series();
            families.put(sample.family(), new Family(sample.type(), sample.help(), series));
            if (sample.type() == Type.GAUGE) {
                series.put(sample.series(), sample.value());
            } else {
                series.merge(sample.series(), sample.value(), Double::sum);
            }
        }

        /** The value of one series ({@code name{labels}} as {@link Sample#series()} renders it), or null. */
        Double value(String series) {
            for (Family f : families.values()) {
                Double v = f.series().get(series);
                if (v != null) {
                    return v;
                }
            }
            return null;
        }

        String render() {
            StringBuilder out = new StringBuilder(HEADER);
            families.forEach((name, f) -> {
                out.append("# HELP ").append(name).append(' ').append(escapeHelp(f.help())).append('\n');
                out.append("# TYPE ").append(name).append(' ').append(f.type().wireName()).append('\n');
                f.series().forEach((series, value) -> out.append(series).append(' ').append(number(value)).append('\n'));
            });
            return out.toString();
        }

        /**
         * Reads what {@link #render} writes.
         *
         * @throws IllegalArgumentException naming the line that is not in this file's format
         */
        static Contents parse(String text) {
            Contents contents = new Contents();
            String family = null;
            String help = null;
            Type type = null;
            int number = 0;
            for (String line : text.split("\n", -1)) {
                number++;
                if (line.isEmpty() || line.startsWith("#") && !line.startsWith("# HELP ") && !line.startsWith("# TYPE ")) {
                    continue;
                }
                try {
                    if (line.startsWith("# HELP ")) {
                        String[] parts = line.substring(7).split(" ", 2);
                        family = parts[0];
                        help = parts.length > 1 ? unescapeHelp(parts[1]) : "";
                        type = null;
                    } else if (line.startsWith("# TYPE ")) {
                        String[] parts = line.substring(7).split(" ", 2);
                        if (!parts[0].equals(family) || parts.length < 2) {
                            throw new IllegalArgumentException("a TYPE line that does not follow its family's HELP line");
                        }
                        type = Type.fromWireName(parts[1]);
                        contents.families.putIfAbsent(family, new Family(type, help, new TreeMap<>()));
                    } else {
                        if (type == null) {
                            throw new IllegalArgumentException("a sample before its family's TYPE line");
                        }
                        Sample sample = sampleLine(line, family, type, help);
                        if (contents.families.get(family).series().put(sample.series(), sample.value()) != null) {
                            throw new IllegalArgumentException("the series " + sample.series() + " twice");
                        }
                    }
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("line " + number + ": " + e.getMessage() + ": " + line, e);
                }
            }
            return contents;
        }
    }

    static final String HEADER = "# Written by `oncegate run --metrics-textfile` (node_exporter textfile collector)."
            + " Counters and summaries add up the runs of this host; do not edit.\n";

    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");
    private static final Pattern TEMPORARY = Pattern.compile("\\.\\d+\\.tmp");
    private static final Duration POLL = Duration.ofMillis(10);

    /** In-process turns: a file lock belongs to the process, so its threads queue here first. */
    private static final Object IN_PROCESS = new Object();

    private final Path file;
    private final Duration lockWait;

    /**
     * The textfile {@code file}, whose updates wait at most {@code lockWait} for another
     * process's.
     */
    MetricsTextfile(Path file, Duration lockWait) {
        this.file = file.toAbsolutePath().normalize();
        this.lockWait = Objects.requireNonNull(lockWait, "lockWait");
    }

    Path file() {
        return file;
    }

    Path lockFile() {
        return file.resolveSibling(file.getFileName() + ".lock");
    }

    /**
     * Adds {@code samples} to the file under its lock (see the class comment).
     *
     * @return the contents written
     * @throws IOException when the directory cannot be written, or another process held the lock
     *                     longer than the wait: the samples are not in the file (the caller says so)
     */
    Contents update(List<Sample> samples) throws IOException, InterruptedException {
        synchronized (IN_PROCESS) {
            try (FileChannel channel = FileChannel.open(lockFile(), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock ignored = lock(channel)) {
                removeLeftovers();
                Contents contents = read();
                samples.forEach(contents::apply);
                write(contents.render());
                return contents;
            }
        }
    }

    /**
     * Makes sure every series of {@code samples} is in the file, adding the missing ones at zero
     * (existing series keep their values): a series must exist at zero before its first increment,
     * or Prometheus's {@code increase()} never sees that increment. The file is read without the
     * lock first; it is written (under the lock) only when a series is missing, once per new
     * namespace on a host.
     *
     * @return whether the file was written
     * @throws IOException as {@link #update}
     */
    boolean addMissingAtZero(List<Sample> samples) throws IOException, InterruptedException {
        List<Sample> zeros = samples.stream().filter(s -> s.type() != Type.GAUGE)
                .map(s -> new Sample(s.family(), s.type(), s.help(), s.sample(), s.labels(), 0)).toList();
        if (Files.exists(file)) {
            try {
                Contents contents = Contents.parse(Files.readString(file, StandardCharsets.UTF_8));
                if (zeros.stream().allMatch(s -> contents.value(s.series()) != null)) {
                    return false;
                }
            } catch (IOException | IllegalArgumentException e) {
                // renamed away mid-read, or not ours: the locked update below deals with it
            }
        }
        update(zeros);
        return true;
    }

    /** Waits, polling, for the exclusive lock: a blocking lock would wait forever on a hung holder. */
    private FileLock lock(FileChannel channel) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + lockWait.toNanos();
        while (true) {
            FileLock lock = channel.tryLock();
            if (lock != null) {
                return lock;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("another process held " + lockFile() + " for more than " + Durations.format(lockWait)
                        + " (a hung `oncegate run`? `fuser " + lockFile() + "` names it)");
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    /** The file's contents; empty when it does not exist, and when it does not parse (moved aside). */
    private Contents read() throws IOException {
        if (!Files.exists(file)) {
            return new Contents();
        }
        String text = Files.readString(file, StandardCharsets.UTF_8);
        try {
            return Contents.parse(text);
        } catch (IllegalArgumentException e) {
            Path aside = file.resolveSibling(file.getFileName() + ".unparsable");
            Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
            System.err.println("oncegate: " + file + " is not a file oncegate wrote (" + e.getMessage() + "): moved to "
                    + aside + ", counting afresh (Prometheus reads the drop as a counter reset)");
            return new Contents();
        }
    }

    private void write(String text) throws IOException {
        Path temporary = file.resolveSibling(file.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        try (FileChannel out = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
            while (bytes.hasRemaining()) {
                out.write(bytes);
            }
            out.force(true);
        }
        PosixFileAttributeView posix = Files.getFileAttributeView(file, PosixFileAttributeView.class);
        if (posix != null && Files.exists(file)) {
            Files.setPosixFilePermissions(temporary, posix.readAttributes().permissions());
        }
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Under the lock, {@code PATH.<n>.tmp} files belong to writers that died before their rename. */
    private void removeLeftovers() throws IOException {
        String prefix = file.getFileName().toString();
        // Compared by prefix, not by a glob of the name: a name may hold glob characters ([, *, ?).
        try (DirectoryStream<Path> siblings = Files.newDirectoryStream(file.getParent())) {
            for (Path sibling : siblings) {
                String name = sibling.getFileName().toString();
                if (name.startsWith(prefix) && TEMPORARY.matcher(name.substring(prefix.length())).matches()) {
                    Files.deleteIfExists(sibling);
                }
            }
        }
    }

    private static Sample sampleLine(String line, String family, Type type, String help) {
        Matcher m = SAMPLE.matcher(line);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a sample");
        }
        Map<String, String> labels = new TreeMap<>();
        if (m.group(2) != null) {
            Matcher l = LABEL.matcher(m.group(2));
            int end = 0;
            while (l.lookingAt()) {
                if (labels.put(l.group(1), unescapeLabel(l.group(2))) != null) {
                    throw new IllegalArgumentException("label " + l.group(1) + " twice");
                }
                end = l.end();
                l.region(end, m.group(2).length());
            }
            if (end != m.group(2).length()) {
                throw new IllegalArgumentException("malformed labels");
            }
        }
        double value;
        try {
            value = Double.parseDouble(m.group(3));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a number: " + m.group(3), e);
        }
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException("not a finite number: " + m.group(3));
        }
        return new Sample(family, type, help, m.group(1), labels, value);
    }

    /** Integral values as integers, others as Java renders doubles (which Prometheus parses). */
    static String number(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return Long.toString((long) value);
        }
        return Double.toString(value);
    }

    static String escapeLabel(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static String escapeHelp(String help) {
        return help.replace("\\", "\\\\").replace("\n", "\\n");
    }

    private static String unescapeLabel(String text) {
        return unescape(text, true);
    }

    private static String unescapeHelp(String text) {
        return unescape(text, false);
    }

    private static String unescape(String text, boolean quotes) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c != '\\' || i + 1 == text.length()) {
                out.append(c);
                continue;
            }
            char next = text.charAt(++i);
            switch (next) {
                case 'n' -> out.append('\n');
                case '\\' -> out.append('\\');
                case '"' -> {
                    if (!quotes) {
                        out.append('\\');
                    }
                    out.append('"');
                }
                default -> out.append('\\').append(next);
            }
        }
        return out.toString();
    }
}
