package dev.oncegate.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Counts the WARN and ERROR lines the libraries logged during a trial (Curator's LeaderLatch,
 * for one, logs an ERROR each time it resets), by reading what the run's slf4j-simple log file
 * gained since a mark. slf4j-simple writes and flushes one line per event; stack-trace lines do
 * not start with a level and are not counted.
 *
 * <p>Thread-safe (stateless apart from the file's path).
 */
final class LogTally {

    /** {@code 12:00:00.000 [thread] ERROR logger - message}, as {@link BenchMain} configures slf4j-simple. */
    private static final Pattern LEVEL = Pattern.compile("^\\S+ \\[[^\\]]*\\] (WARN|ERROR) ");

    private final Path file;

    /** Counts lines of {@code file}; null counts nothing (the log is not ours to read). */
    LogTally(Path file) {
        this.file = file;
    }

    /** Where the log file ends now. */
    Mark mark() {
        try {
            return new Mark(file != null && Files.exists(file) ? Files.size(file) : 0);
        } catch (IOException e) {
            return new Mark(0);
        }
    }

    /** A position in the log file. */
    record Mark(long offset) {
    }

    /** Lines logged at WARN and at ERROR. */
    record Counts(long warn, long error) {
    }

    /** What was logged since {@code mark}; null when there is no log file to read. */
    Counts since(Mark mark) {
        if (file == null || !Files.exists(file)) {
            return null;
        }
        long warn = 0;
        long error = 0;
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            in.seek(mark.offset());
            BufferedReader lines = new BufferedReader(new InputStreamReader(Channels.newInputStream(in.getChannel()),
                    StandardCharsets.UTF_8));
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                Matcher m = LEVEL.matcher(line);
                if (m.find()) {
                    if (m.group(1).equals("WARN")) {
                        warn++;
                    } else {
                        error++;
                    }
                }
            }
        } catch (IOException e) {
            return null;
        }
        return new Counts(warn, error);
    }
}
