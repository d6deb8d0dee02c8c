package dev.oncegate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free 127.0.0.1 ports for the kit's servers, chosen below the kernel's ephemeral range.
 *
 * <p>Why not the ephemeral range, where {@code new ServerSocket(0)} (Curator's
 * {@code InstanceSpec} port {@code -1}) picks: every outgoing connection of every process takes
 * its local port from that range. A server that is stopped and then restarted on its port (a
 * killed ensemble peer, a restarted standalone server) finds that port free for the length of its
 * outage, and a busy machine running several test JVMs at once (clients reconnecting, peers
 * electing, four-letter probes) hands it to some connection often enough: the restart then
 * cannot bind. Below the range, only a process that names the port itself can take it.
 *
 * <p>The range's low end is read from {@code /proc/sys/net/ipv4/ip_local_port_range} where
 * there is one; elsewhere 32768 is assumed, which is below the default range of Linux, macOS
 * and Windows. Stateless and thread-safe.
 */
final class Ports {

    /** The lowest port handed out: above the well-known and most registered service ports. */
    static final int FLOOR = 10_000;
    private static final int ASSUMED_EPHEMERAL_LOW = 32_768;
    private static final int ATTEMPTS = 200;

    private Ports() {
    }

    /**
     * A port that is free on 127.0.0.1 right now and is not in {@code taken} (the ports already
     * chosen for the same server or ensemble).
     *
     * @throws UncheckedIOException when none is found (the machine has no free port below its
     *     ephemeral range): the message says which range was tried
     */
    static int pick(Collection<Integer> taken) {
        int ceiling = ephemeralLow(Path.of("/proc/sys/net/ipv4/ip_local_port_range"));
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < ATTEMPTS; i++) {
            int port = random.nextInt(FLOOR, ceiling);
            if (!taken.contains(port) && free(port)) {
                return port;
            }
        }
        throw new UncheckedIOException(new IOException("no free port on 127.0.0.1 in " + FLOOR + ".." + (ceiling - 1)
                + " after " + ATTEMPTS + " random tries: free some ports in that range"));
    }

    /** Whether a server could bind {@code 127.0.0.1:port} now (as ZooKeeper does, with SO_REUSEADDR). */
    static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The low end of the ephemeral range from {@code rangeFile} ({@code "32768\t60999"}), or
     * 32768 when it is missing or unreadable, or leaves fewer than 2000 ports above {@link #FLOOR}.
     */
    static int ephemeralLow(Path rangeFile) {
        try {
            String[] bounds = Files.readString(rangeFile).trim().split("\\s+");
            int low = Integer.parseInt(bounds[0]);
            return low - FLOOR >= 2_000 ? low : ASSUMED_EPHEMERAL_LOW;
        } catch (IOException | RuntimeException e) {
            return ASSUMED_EPHEMERAL_LOW; // not Linux, or no procfs: the usual defaults start higher still
        }
    }
}
