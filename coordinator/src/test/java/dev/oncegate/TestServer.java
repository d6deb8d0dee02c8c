package dev.oncegate;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A real standalone ZooKeeper on 127.0.0.1 for the coordinator's own tests (which cannot use the
 * test kit: it depends on this module), with its files under a JUnit temp directory, and one
 * started client. Close it after the class.
 */
record TestServer(TestingServer server, CuratorFramework client) implements AutoCloseable {

    /** Starts a server whose data directory (and ZooKeeper's generated config file) live under {@code dir}. */
    static TestServer start(Path dir) throws Exception {
        TestingServer server = new TestingServer(new InstanceSpec(Files.createDirectories(dir.resolve("data")).toFile(),
                -1, -1, -1, true, -1, -1, -1, Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1"), true);
        CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(), 6000, 3000, new RetryOneTime(100));
        client.start();
        return new TestServer(server, client);
    }

    @Override
    public void close() throws Exception {
        client.close();
        server.close();
    }
}
