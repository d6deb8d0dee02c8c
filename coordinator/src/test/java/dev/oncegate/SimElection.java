package dev.oncegate;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;

import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;

/**
 * An election member on a {@link SimClient}, with the observable behaviour of Curator 5.9.0's
 * {@code LeaderLatch}: it creates a protected EPHEMERAL_SEQUENTIAL node
 * {@code latchPath/_c_<uuid>-latch-<seq>} holding its id; the member whose node sorts first (by
 * the sequence after {@code latch-}) leads, once it has read its own node and found its session
 * owning it; a member behind watches the node just before its own (a getData watch) and looks
 * again when that node is deleted; SUSPENDED and LOST take leadership away, RECONNECTED makes it
 * look again (a member whose node is gone, with its expired session, creates a new one); a member
 * that finds its node missing creates a new one. Leaving deletes the node (Curator's guaranteed
 * delete, in the background) and takes leadership away without a callback (Curator's SILENT
 * close mode); leaving with everyone while waiting behind others keeps the node until the member
 * comes to lead, as production's {@code Elections} does.
 *
 * <p>Every ZooKeeper round trip of the latch (create, getChildren, getData) is a step of its own
 * on the server's event queue, as Curator runs them in the background, and {@code onChange} is
 * queued too. A step that finds the client disconnected is dropped, as a background call failing
 * with ConnectionLoss: the RECONNECTED that follows looks again. Background calls do not go through
 * {@link SimFaults}. The uuid comes from {@link SimZooKeeper#nextUuid()}.
 *
 * <p>Not thread-safe: the simulation runs on one thread.
 */
final class SimElection implements ZooKeeperOps.ElectionMember {

    private static final String LOCK_NAME = "latch-";

    private final SimClient client;
    private final SimZooKeeper server;
    private final String latchPath;
    private final String id;
    private final Runnable onChange;
    private final Consumer<ConnectionState> connectionListener = this::connectionChanged;
    private final List<String> watched = new ArrayList<>();
    private final Watcher predecessorWatcher = this::predecessorChanged;
    private String ourPath;
    private boolean leader;
    private boolean closed;
    private boolean leaving;

    private SimElection(SimClient client, String latchPath, String id, Runnable onChange) {
        this.client = client;
        this.server = client.server();
        this.latchPath = latchPath;
        this.id = id;
        this.onChange = onChange;
    }

    /** Joins: the node is created by a queued step (after the connection is established). */
    static SimElection join(SimClient client, String latchPath, String id, Runnable onChange) {
        SimElection e = new SimElection(client, latchPath, id, onChange);
        client.onConnectionState(e.connectionListener);
        e.step("create", e::reset);
        return e;
    }

    @Override
    public String ourPath() {
        return ourPath;
    }

    @Override
    public boolean hasLeadership() {
        return !closed && !leaving && leader;
    }

    /** The member's id (its node's data). */
    String id() {
        return id;
    }

    /**
     * Leaves as production's Elections does: at once when it leads, has no node yet, or leaves on
     * its own; with everyone and waiting behind others, only once it comes to lead (or the client's
     * ops close), so that its node stays in the queue until then. Either way it is no more told of
     * changes. Leaving again does nothing.
     */
    @Override
    public void leave(boolean withEveryone) {
        if (closed || leaving) {
            return;
        }
        if (withEveryone && !leader && ourPath != null) {
            leaving = true;
            client.waitingToLeave(this, true);
            return;
        }
        leaveNow();
    }

    /** Curator's close (SILENT): the node deleted in the background, watches and listener dropped. */
    void leaveNow() {
        if (closed) {
            return;
        }
        if (leaving) {
            leaving = false;
            client.waitingToLeave(this, false);
        }
        closed = true;
        leader = false;
        setNode(null);
        for (String path : watched) {
            client.forgetWatch(path, predecessorWatcher);
        }
        watched.clear();
        client.removeConnectionStateListener(connectionListener);
    }

    private void step(String what, Runnable action) {
        server.enqueue(client, client.name() + " latch " + id + " " + what, () -> {
            if (!closed && client.connected()) {
                action.run();
            }
        });
    }

    private void reset() {
        setLeadership(false);
        setNode(null);
        String path = latchPath + "/_c_" + server.nextUuid() + "-" + LOCK_NAME;
        byte[] data = id.getBytes(StandardCharsets.UTF_8);
        String created;
        try {
            created = createNode(path, data);
        } catch (KeeperException e) {
            return; // Curator logs "getChildren() failed" and the latch waits for a reconnection
        }
        setNode(created);
        step("getChildren", this::checkLeadership);
    }

    /** creatingParentContainersIfNeeded: a missing latch is created as a container, then the node. */
    private String createNode(String path, byte[] data) throws KeeperException {
        long session = client.currentSession();
        try {
            return server.create(session, path, data, client.aclFor(path), CreateMode.EPHEMERAL_SEQUENTIAL).path();
        } catch (KeeperException.NoNodeException e) {
            try {
                server.create(session, latchPath, new byte[0], client.aclFor(latchPath), CreateMode.CONTAINER);
            } catch (KeeperException.NodeExistsException meanwhile) {
                // someone else created it: what was wanted
            }
            return server.create(session, path, data, client.aclFor(path), CreateMode.EPHEMERAL_SEQUENTIAL).path();
        }
    }

    private void setNode(String path) {
        String old = ourPath;
        ourPath = path;
        if (old != null) {
            client.deleteGuaranteed(old);
        }
    }

    private void checkLeadership() {
        List<String> children;
        try {
            children = server.getChildren(client.currentSession(), latchPath);
        } catch (KeeperException e) {
            return; // the callback ignores a failed getChildren
        }
        List<String> sorted = new ArrayList<>(children);
        sorted.sort(Comparator.comparing(SimElection::sortKey));
        int ourIndex = ourPath == null ? -1 : sorted.indexOf(ourPath.substring(ourPath.lastIndexOf('/') + 1));
        if (ourIndex < 0) {
            reset();
        } else if (ourIndex == 0) {
            String mine = ourPath;
            step("getData own", () -> claim(mine));
        } else {
            setLeadership(false);
            String predecessor = latchPath + "/" + sorted.get(ourIndex - 1);
            step("getData predecessor", () -> watch(predecessor));
        }
    }

    /** LeaderLatch's check that its first node is its own session's before it leads. */
    private void claim(String mine) {
        long owner;
        try {
            owner = server.getData(client.currentSession(), mine).stat().getEphemeralOwner();
        } catch (KeeperException e) {
            owner = -1;
        }
        if (owner != client.currentSession()) {
            reset();
        } else {
            setLeadership(true);
        }
    }

    private void watch(String predecessor) {
        try {
            server.getData(client.currentSession(), predecessor);
            client.registerDataWatch(predecessor, predecessorWatcher);
            watched.add(predecessor);
        } catch (KeeperException.NoNodeException gone) {
            step("getChildren", this::checkLeadership);
        } catch (KeeperException e) {
            // the callback ignores other failures
        }
    }

    private void predecessorChanged(org.apache.zookeeper.WatchedEvent event) {
        if (event.getType() == EventType.NodeDeleted) {
            watched.remove(event.getPath());
            if (!closed) {
                step("getChildren", this::checkLeadership);
            }
        }
    }

    private void connectionChanged(ConnectionState state) {
        if (closed) {
            return;
        }
        switch (state) {
            case RECONNECTED -> step("getChildren", this::checkLeadership);
            case SUSPENDED, LOST -> setLeadership(false);
            default -> {
                // CONNECTED, READ_ONLY: nothing
            }
        }
    }

    private void setLeadership(boolean now) {
        if (now && leaving) {
            leaveNow(); // a member that left with everyone is closed when it comes to lead
            return;
        }
        if (leader == now) {
            return;
        }
        leader = now;
        server.enqueue(client, client.name() + " latch " + id + (now ? " isLeader" : " notLeader"), () -> {
            if (!closed && !leaving) {
                onChange.run();
            }
        });
    }

    /** LeaderLatch's sort: the part after {@code latch-}, that is the sequence number. */
    private static String sortKey(String child) {
        int at = child.lastIndexOf(LOCK_NAME);
        return at < 0 ? child : child.substring(at + LOCK_NAME.length());
    }

    @Override
    public String toString() {
        return "SimElection[" + id + " at " + ourPath + (leader ? ", leader" : "") + (closed ? ", left" : "") + "]";
    }
}
