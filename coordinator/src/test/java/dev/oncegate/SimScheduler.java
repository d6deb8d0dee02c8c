package dev.oncegate;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;

/**
 * The simulator's baton: actors run the protocol's own blocking code on threads of their own, but only
 * one of them (or the scheduler) runs at any moment, and only where the seed says. An actor hands the
 * baton back at every ZooKeeper call ({@link #yieldPoint}) and whenever it waits for events
 * ({@link #await}); the scheduler then picks, with the seed's random source, what happens next: an
 * actor resumes, a watch event or an election change is delivered, a fault strikes, or virtual time
 * jumps to the next timer. Everything is on virtual time ({@link #now}), so a history is reproducible
 * from its seed and runs as fast as the code does.
 *
 * <p>Not thread-safe in the usual sense: its state is only touched by whoever holds the baton.
 */
final class SimScheduler {

    /** What an actor runs. */
    interface Body {
        void run() throws Exception;
    }

    /** Thrown at an actor's next yield point when its history is over (or it crashed): unwinds its thread. */
    static final class Abort extends Error {
        Abort() {
            super("simulation over", null, false, false);
        }
    }

    /** One actor: a thread that runs only when the scheduler hands it the baton. */
    final class Actor {
        final String name;
        final int index;
        private final Body body;
        private final Semaphore go = new Semaphore(0);
        private final java.util.concurrent.CountDownLatch finished = new java.util.concurrent.CountDownLatch(1);
        private volatile Thread thread;
        private boolean started;
        /** Yielded at a call and ready to go on. */
        boolean ready;
        /** Waiting on a monitor until {@link #wakeAt} or an event. */
        boolean parked;
        long wakeAt;
        private Object monitor;
        private boolean granted;
        boolean done;
        boolean crashed;
        Throwable failure;
        /** What the actor is about to do at its yield point (for the history). */
        String pending = "start";

        private Actor(String name, int index, Body body) {
            this.name = name;
            this.index = index;
            this.body = body;
        }

        boolean alive() {
            return !done && !crashed;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** Threads that carry actors, reused from history to history (an actor's thread ends with its body). */
    private static final java.util.concurrent.ExecutorService CARRIERS = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "sim-actor");
        t.setDaemon(true);
        return t;
    });

    final SplittableRandom random;
    private final List<Actor> actors = new ArrayList<>();
    private final Semaphore back = new Semaphore(0);
    private Actor current;
    private volatile boolean aborting;
    private long now;

    SimScheduler(long seed, long startMillis) {
        this.random = new SplittableRandom(seed);
        this.now = startMillis;
    }

    /** Virtual time, in epoch milliseconds. */
    long now() {
        return now;
    }

    /** Moves virtual time forward (never back). */
    void advanceTo(long millis) {
        now = Math.max(now, millis);
    }

    List<Actor> actors() {
        return actors;
    }

    /** The actor holding the baton, or null when the scheduler does. */
    Actor current() {
        return current;
    }

    /** A new actor, ready to start at its first turn. */
    Actor spawn(String name, Body body) {
        Actor a = new Actor(name, actors.size(), body);
        a.ready = true;
        actors.add(a);
        return a;
    }

    // ---- the actor's side -----------------------------------------------------------------------

    /** On an actor's thread, before each ZooKeeper call: the baton goes back to the scheduler until it picks this actor. */
    void yieldPoint(String what) {
        if (aborting) {
            throw new Abort();
        }
        Actor a = current;
        if (a == null || Thread.currentThread() != a.thread) {
            return; // the scheduler's own reads (the checker), or setup
        }
        a.pending = what;
        a.ready = true;
        handBack(a);
        a.go.acquireUninterruptibly();
        current = a;
        if (aborting || a.crashed) {
            throw new Abort();
        }
    }

    /**
     * On an actor's thread, holding {@code monitor}: waits until {@code millis} of virtual time passed
     * or the scheduler wakes it for an event. The monitor is released meanwhile, as {@link Object#wait} does.
     */
    void await(Object monitor, long millis) throws InterruptedException {
        if (aborting) {
            throw new Abort();
        }
        Actor a = current;
        if (a == null || Thread.currentThread() != a.thread) {
            throw new IllegalStateException("await outside an actor");
        }
        a.pending = "wait " + millis + " ms";
        a.parked = true;
        a.wakeAt = now + Math.max(1, millis);
        a.monitor = monitor;
        a.granted = false;
        handBack(a);
        while (!a.granted) {
            monitor.wait();
        }
        a.granted = false;
        a.monitor = null;
        current = a;
        if (aborting || a.crashed) {
            throw new Abort();
        }
    }

    private void handBack(Actor a) {
        current = null;
        back.release();
    }

    // ---- the scheduler's side -------------------------------------------------------------------

    /** Gives the baton to {@code a} and waits until it yields, parks or ends. */
    void resume(Actor a) {
        if (!a.alive()) {
            throw new IllegalStateException(a + " is not alive");
        }
        current = a;
        if (!a.started) {
            a.started = true;
            a.ready = false;
            CARRIERS.execute(() -> runBody(a));
            a.go.release();
        } else if (a.parked) {
            a.parked = false;
            Object m = a.monitor;
            synchronized (m) {
                a.granted = true;
                m.notifyAll();
            }
        } else {
            a.ready = false;
            a.go.release();
        }
        back.acquireUninterruptibly();
    }

    private void runBody(Actor a) {
        a.thread = Thread.currentThread();
        a.go.acquireUninterruptibly();
        try {
            if (!aborting) {
                a.body.run();
            }
        } catch (Abort ignored) {
            // the history ended or the actor crashed here
        } catch (Throwable t) {
            a.failure = t;
        } finally {
            a.done = true;
            a.ready = false;
            a.parked = false;
            a.thread = null;
            current = null;
            a.finished.countDown();
            back.release();
        }
    }

    /** Marks {@code a} crashed: it never runs again (its thread is unwound at the end of the history). */
    void crash(Actor a) {
        a.crashed = true;
        a.ready = false;
        a.parked = false;
    }

    /** Wakes a parked actor early (an event for it arrived); a no-op for the others. */
    void wake(Actor a) {
        if (a.parked && a.alive()) {
            a.wakeAt = now;
        }
    }

    /** Actors that may run now: ready ones, and parked ones whose time has come. */
    List<Actor> runnable() {
        List<Actor> out = new ArrayList<>();
        for (Actor a : actors) {
            if (a.alive() && (a.ready || (a.parked && a.wakeAt <= now))) {
                out.add(a);
            }
        }
        return out;
    }

    /** The earliest wake-up time of a parked actor, or {@code Long.MAX_VALUE}. */
    long nextTimer() {
        long t = Long.MAX_VALUE;
        for (Actor a : actors) {
            if (a.alive() && a.parked) {
                t = Math.min(t, a.wakeAt);
            }
        }
        return t;
    }

    /** Ends the history: every thread still blocked is unwound (its next yield point throws {@link Abort}). */
    void shutdown() {
        aborting = true;
        for (Actor a : actors) {
            if (!a.started) {
                continue;
            }
            try {
                for (int i = 0; i < 100 && !a.finished.await(i < 10 ? 1 : 100, java.util.concurrent.TimeUnit.MILLISECONDS); i++) {
                    Object m = a.monitor;
                    if (m != null) {
                        synchronized (m) {
                            a.granted = true;
                            m.notifyAll();
                        }
                    }
                    a.go.release();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (a.finished.getCount() > 0) {
                Thread t = a.thread;
                throw new IllegalStateException("actor " + a + " did not unwind: "
                        + (t == null ? "" : java.util.Arrays.toString(t.getStackTrace())));
            }
        }
    }
}
