package dev.oncegate.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Properties;

import org.apache.zookeeper.client.ZKClientConfig;

/**
 * {@code --zk-client-config FILE} / {@code ONCEGATE_ZK_CLIENT_CONFIG}: a ZooKeeper client
 * properties file, the same keys ZooKeeper's own {@code ZKClientConfig} file takes (TLS:
 * {@code zookeeper.client.secure}, {@code zookeeper.clientCnxnSocket}, {@code zookeeper.ssl.*};
 * SASL: {@code zookeeper.sasl.*}). It is read completely before any connection, so a missing or
 * unreadable file is bad input (exit 2) and never a connection that fails later (13).
 *
 * <p>Stateless and thread-safe.
 */
final class ZkClientConfigFile {

    static final String ENV = "ONCEGATE_ZK_CLIENT_CONFIG";
    private static final String HINT = " (--zk-client-config / " + ENV + " names a ZooKeeper client properties file)";

    private ZkClientConfigFile() {
    }

    /**
     * The file's properties over ZooKeeper's system-property defaults (as ZooKeeper layers its own
     * file), or null when no file is named; an empty {@code ONCEGATE_ZK_CLIENT_CONFIG} counts as unset.
     *
     * @param name the option's value (picocli falls back to the environment variable)
     * @throws IllegalArgumentException naming the option when the file is missing, unreadable or not
     *                                  a properties file
     */
    static ZKClientConfig load(String name) {
        String env = System.getenv(ENV);
        if (name == null || name.isEmpty() && env != null && env.isEmpty()) {
            return null;
        }
        if (name.isBlank()) {
            throw new IllegalArgumentException("--zk-client-config: the file name is empty" + HINT);
        }
        Path file;
        try {
            file = Path.of(name);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("--zk-client-config: '" + name + "' is not a file name: " + e.getReason() + HINT, e);
        }
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("--zk-client-config: " + file
                    + (Files.exists(file) ? " is not a regular file" : " does not exist") + HINT);
        }
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            properties.load(in); // ISO-8859-1, as ZooKeeper reads its own files
        } catch (AccessDeniedException e) {
            throw new IllegalArgumentException("--zk-client-config: " + file + " cannot be read: permission denied" + HINT, e);
        } catch (IOException e) {
            throw new IllegalArgumentException("--zk-client-config: " + file + " cannot be read: " + e + HINT, e);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--zk-client-config: " + file + " is not a properties file: " + e.getMessage(), e);
        }
        ZKClientConfig config = new PlainClientConfig();
        properties.forEach((key, value) -> config.setProperty(key.toString().trim(), value.toString().trim()));
        return config;
    }
}
