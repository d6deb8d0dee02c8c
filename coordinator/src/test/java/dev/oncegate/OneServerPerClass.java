package dev.oncegate;

import java.nio.file.Path;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test class with one {@link TestServer} for all its tests: started before the first, closed
 * after the last, its files under a JUnit temp directory. Test classes run one after another, so
 * the static fields belong to the class that is running.
 */
abstract class OneServerPerClass {

    static TestServer zk;
    static CuratorFramework client;

    /** The server's data directory's parent also receives ZooKeeper's generated config file. */
    @TempDir
    static Path serverDir;

    @BeforeAll
    static void startServer() throws Exception {
        zk = TestServer.start(serverDir);
        client = zk.client();
    }

    @AfterAll
    static void stopServer() throws Exception {
        zk.close();
    }
}
