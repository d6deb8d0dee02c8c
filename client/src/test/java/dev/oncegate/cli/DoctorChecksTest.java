package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.oncegate.Checkup;
import org.junit.jupiter.api.Test;

/**
 * The thresholds of {@code oncegate doctor}, on made-up observations: which clock skew, session
 * timeout and server answers are ok, warn or fail.
 */
class DoctorChecksTest {

    static final Duration TTL = Duration.ofSeconds(30);
    static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

    /** This host sent at T and got the reply 20 ms later; the server stamped {@code serverOffsetMs} after T + 10 ms. */
    static Checkup.ServerClock clock(long serverOffsetMs) {
        return new Checkup.ServerClock(T, T.plusMillis(20), T.plusMillis(10 + serverOffsetMs), 42);
    }

    @Test
    void clock_okWithinASecond_warnBeyond_failFromHalfTheLeaseTtl() {
        assertThat(DoctorChecks.clock(clock(0), TTL).status()).isEqualTo(DoctorChecks.Status.OK);
        assertThat(DoctorChecks.clock(clock(-900), TTL).status()).isEqualTo(DoctorChecks.Status.OK);
        DoctorChecks.Check ahead = DoctorChecks.clock(clock(-5_000), TTL);
        assertThat(ahead.status()).isEqualTo(DoctorChecks.Status.WARN);
        assertThat(ahead.detail()).startsWith("this host's clock is 5000 ms ahead of the server's (± 11 ms)");
        assertThat(ahead.fix()).contains("chrony");
        DoctorChecks.Check behind = DoctorChecks.clock(clock(16_000), TTL);
        assertThat(behind.status()).isEqualTo(DoctorChecks.Status.FAIL);
        assertThat(behind.detail()).contains("16000 ms behind", "half the lease TTL (30s)");
    }

    @Test
    void clock_givesTheBenefitOfTheDoubt_ofTheRoundTrip() {
        Checkup.ServerClock slowReply = new Checkup.ServerClock(T, T.plusSeconds(4), T.plusMillis(2_000 - 2_500), 1);

        assertThat(slowReply.skew()).isEqualTo(Duration.ofMillis(2_500));
        assertThat(DoctorChecks.clock(slowReply, TTL).status()).as("2.5 s ± 2 s may be under 1 s").isEqualTo(DoctorChecks.Status.OK);
    }

    @Test
    void session_warnsWhenTheLeaseTtlIsShorter_orSessionsAreShort() {
        assertThat(DoctorChecks.session(TTL, TTL, TTL).status()).isEqualTo(DoctorChecks.Status.OK);
        assertThat(DoctorChecks.session(TTL, Duration.ofSeconds(20), TTL).detail()).contains("(asked for 30s");
        assertThat(DoctorChecks.session(TTL, TTL, Duration.ofSeconds(10)).status()).isEqualTo(DoctorChecks.Status.WARN);
        assertThat(DoctorChecks.session(Duration.ofSeconds(4), Duration.ofSeconds(4), TTL).detail())
                .contains("expire on ordinary pauses");
    }

    @Test
    void acls_warnWithoutAccessControl_okWhenEveryZnodeHasItsRoleAcl_failNamingTheFirstFewOtherwise() {
        Checkup.AclSweep clean = new Checkup.AclSweep(2, 40, 0, 0, List.of());
        Checkup.AclSweep stale = new Checkup.AclSweep(2, 40, 7, 3, List.of("/ns/a [world:anyone:cdrwa] (…)", "/ns/b (…)"));

        DoctorChecks.Check off = DoctorChecks.acls(checkup(false, null), "/ns");
        DoctorChecks.Check ok = DoctorChecks.acls(checkup(true, clean), "/ns");
        DoctorChecks.Check fail = DoctorChecks.acls(checkup(true, stale), "/ns");

        assertThat(off.status()).isEqualTo(DoctorChecks.Status.WARN);
        assertThat(off.detail()).contains("world-writable by design");
        assertThat(ok.status()).isEqualTo(DoctorChecks.Status.OK);
        assertThat(ok.detail()).isEqualTo("all 40 znodes under /ns carry their role ACL (roles epoch 2)");
        assertThat(fail.status()).isEqualTo(DoctorChecks.Status.FAIL);
        assertThat(fail.detail()).startsWith("7 of 40 znodes under /ns do not carry their role ACL, 3 of them world-writable:"
                + " /ns/a [world:anyone:cdrwa] (…); /ns/b (…)").endsWith("(and 5 more)");
        assertThat(fail.fix()).contains("oncegate acl");
        assertThat(fail.data()).containsEntry("differing", 7L).containsEntry("world_writable", 3L);
    }

    static Checkup checkup(boolean aclsOn, Checkup.AclSweep sweep) {
        return new Checkup(null, null, null, aclsOn, null, List.of(), sweep, null);
    }

    @Test
    void servers_failBelow35_warnFor37_unknownOrDown_okFor38And39() {
        DoctorChecks.ServerAnswer v39 = answer("a:1", "Zookeeper version: 3.9.5-293c, built on 2026\nMode: leader\n");
        DoctorChecks.ServerAnswer v38 = answer("b:2", "Zookeeper version: 3.8.0-, built on 2024\nMode: follower\n");
        DoctorChecks.ServerAnswer v37 = answer("c:3", "Zookeeper version: 3.7.2-abc, built on 2023\nMode: standalone\n");
        DoctorChecks.ServerAnswer v34 = answer("d:4", "Zookeeper version: 3.4.14-4c25d, built on 2019\nMode: standalone\n");
        DoctorChecks.ServerAnswer hidden = answer("e:5", "srvr is not executed because it is not in the whitelist.\n");
        DoctorChecks.ServerAnswer down = new DoctorChecks.ServerAnswer("f:6", null, "Connection refused");

        DoctorChecks.Check ok = DoctorChecks.servers(List.of(v39, v38));
        assertThat(ok.status()).isEqualTo(DoctorChecks.Status.OK);
        assertThat(ok.detail()).isEqualTo("a:1 3.9.5 leader; b:2 3.8.0 follower");
        assertThat(DoctorChecks.servers(List.of(v37)).status()).isEqualTo(DoctorChecks.Status.WARN);
        assertThat(DoctorChecks.servers(List.of(v39, v34)).status()).isEqualTo(DoctorChecks.Status.FAIL);
        assertThat(DoctorChecks.servers(List.of(v39, hidden)).fix()).contains("4lw.commands.whitelist");
        assertThat(DoctorChecks.servers(List.of(v39, v38, down)).detail()).contains("1 of 3 did not answer");
        assertThat(DoctorChecks.servers(List.of(down)).status()).isEqualTo(DoctorChecks.Status.FAIL);
    }

    static DoctorChecks.ServerAnswer answer(String address, String reply) {
        return new DoctorChecks.ServerAnswer(address, reply, null);
    }
}
