package dev.oncegate.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.zookeeper.server.quorum.QuorumPeerConfig;

/**
 * The ZooKeeper configuration of {@code oncegate server}, in three layers: its own defaults
 * (loopback only, autopurge on, no admin server, a few four-letter words), then a {@code zoo.cfg}
 * given with {@code --config}, whose keys win, then the command's flags, each of which sets keys
 * of its own ({@code --port} sets {@code clientPort}…). A flag given on the command line for a key
 * the file sets too is a conflict (bad input): the value must live in one place. The result is
 * parsed by ZooKeeper's own {@link QuorumPeerConfig}, so the file means what it means to
 * ZooKeeper; a file describing an ensemble is refused (this is one standalone server).
 *
 * <p>Not thread-safe; used once, on the main thread.
 */
final class ServerProperties {

    /** Keep five snapshots (and the logs they need), purging every hour: permanent records accumulate. */
    static final int SNAP_RETAIN_COUNT = 5;
    static final int PURGE_INTERVAL_HOURS = 1;
    static final String PROMETHEUS_PROVIDER = "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider";

    /** oncegate server's defaults, under whatever the file sets. */
    static final Map<String, String> DEFAULTS = Map.of(
            "tickTime", "2000",
            "clientPortAddress", "127.0.0.1",
            "admin.enableServer", "false",
            "4lw.commands.whitelist", "mntr,ruok,srvr",
            "autopurge.snapRetainCount", Integer.toString(SNAP_RETAIN_COUNT),
            "autopurge.purgeInterval", Integer.toString(PURGE_INTERVAL_HOURS));

    private final Path file;
    private final Properties fromFile;
    private final Map<String, String> flagKeys = new LinkedHashMap<>();
    private final Properties merged = new Properties();
    private final List<String> conflicts = new ArrayList<>();

    private ServerProperties(Path file, Properties fromFile) {
        this.file = file;
        this.fromFile = fromFile;
        merged.putAll(DEFAULTS);
    }

    /**
     * The defaults, under {@code file} (null: none).
     *
     * @throws IllegalArgumentException when the file cannot be read (exit 2)
     */
    static ServerProperties over(Path file) {
        Properties p = new Properties();
        if (file != null) {
            try (InputStream in = Files.newInputStream(file)) {
                p.load(in);
            } catch (IOException | IllegalArgumentException e) {
                throw new IllegalArgumentException("--config: cannot read " + file + " (" + e.getMessage() + ")", e);
            }
        }
        return new ServerProperties(file, p);
    }

    /**
     * A flag's keys: taken when the file does not set them; when the flag was given on the command
     * line and the file sets any of them, a conflict (reported by {@link #parse}).
     */
    ServerProperties flag(String flag, boolean given, Map<String, String> keys) {
        for (Map.Entry<String, String> key : keys.entrySet()) {
            String inFile = fromFile.getProperty(key.getKey());
            if (inFile == null) {
                merged.setProperty(key.getKey(), key.getValue());
            } else if (given) {
                conflicts.add(flag + " conflicts with " + key.getKey() + "=" + inFile.strip() + " in " + file);
            }
            flagKeys.put(key.getKey(), flag);
        }
        return this;
    }

    /** Whether the file sets {@code key}. */
    boolean fileSets(String key) {
        return fromFile.getProperty(key) != null;
    }

    /**
     * The configuration, parsed by ZooKeeper.
     *
     * @throws IllegalArgumentException for a conflict, a value ZooKeeper refuses, a relative
     *                                  dataDir, or an ensemble's file (exit 2)
     */
    QuorumPeerConfig parse() {
        if (!conflicts.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", conflicts) + ": set each value in one place (--config"
                    + " wins for what the flags do not say; see oncegate server --help)");
        }
        Properties all = new Properties();
        all.putAll(merged);
        all.putAll(fromFile);
        String dataDir = all.getProperty("dataDir", "").strip();
        if (file != null && fileSets("dataDir") && !Path.of(dataDir).isAbsolute()) {
            throw new IllegalArgumentException("--config: dataDir=" + dataDir + " in " + file + " is relative: give an"
                    + " absolute path (oncegate server never depends on the working directory)");
        }
        QuorumPeerConfig config = new QuorumPeerConfig();
        try {
            config.parseProperties(all);
        } catch (QuorumPeerConfig.ConfigException | IllegalArgumentException e) {
            throw new IllegalArgumentException(source() + ": ZooKeeper refuses the configuration: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new IllegalArgumentException(source() + ": " + e.getMessage(), e);
        }
        if (config.isDistributed() || !config.getServers().isEmpty()) {
            throw new IllegalArgumentException("--config: " + file + " describes an ensemble (server.N lines); oncegate"
                    + " server runs one standalone server. Run an ensemble with ZooKeeper's QuorumPeerMain"
                    + " (deploy/ensemble.sh, deploy/systemd/zookeeper.service)");
        }
        return config;
    }

    private String source() {
        return file != null ? "--config " + file : String.join("/", distinctFlags());
    }

    private List<String> distinctFlags() {
        return flagKeys.values().stream().distinct().toList();
    }
}
