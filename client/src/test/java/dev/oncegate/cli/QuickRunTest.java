package dev.oncegate.cli;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link QuickRun} makes of a {@code run} command line the {@link RunCommand} that picocli makes,
 * field by field (its mixins' too), or declines it; it never accepts what picocli refuses. The
 * random command lines are seeded (seed printed; replay with {@code -Doncegate.quickrun.seed=N}).
 */
class QuickRunTest {

    @TempDir
    Path dir;

    @Test
    void plainCommandLines_areTakenQuickly_asPicocliTakesThem() throws Exception {
        String f = Files.writeString(dir.resolve("report.txt"), "report\n").toString();
        List<String[]> lines = List.of(
                new String[] {"run", "--dest", "slack:C1", "--file", f, "--", "true"},
                new String[] {"run", "--connect", "127.0.0.1:2181", "--namespace", "/bench", "--dest", "bench:startup",
                        "--file", f, "--", "true"},
                new String[] {"run", "-v", "--dest-name=slack:#général", "--file=" + f, "--wait=1m30s", "--timeout", "2s",
                        "--not-sent-exit", "42", "--shutdown-grace", "PT5S", "--", "sh", "-c", "exit 42", "-v", "--", "@x"},
                new String[] {"run", "--dest", "mail:a@b", "--file", f, "--task-id", "@worker", "--result-file", "r.json",
                        "--metrics-textfile", "runs.prom", "--state-dir", "state", "--host", "h1", "--auth", "u:p",
                        "--connect-timeout=250ms", "--zk-client-config", "zk.properties", "--", "./deliver.sh"},
                new String[] {"run", "--result-fd", "3", "--auth-file", "auth", "--dest", "x:y", "--file", f, "--verbose",
                        "--", "--dest"},
                new String[] {"run", "--dest=", "--file=", "--task-id=", "--", "true"});
        for (String[] args : lines) {
            RunCommand quick = QuickRun.parse(args, System::getenv);

            assertThat(quick).as(String.join(" ", args)).isNotNull();
            assertThat(fields(quick)).as(String.join(" ", args)).isEqualTo(fields(picocli(args)));
        }
    }

    @Test
    void notPlainCommandLines_areDeclined() throws Exception {
        String f = Files.writeString(dir.resolve("report.txt"), "report\n").toString();
        List<String[]> lines = List.of(
                new String[] {"run"},
                new String[] {"run", "--dest", "slack:C1", "--file", f},
                new String[] {"run", "--dest", "slack:C1", "--file", f, "--"},
                new String[] {"run", "--dest", "slack:C1", "--file", f, "true"},
                new String[] {"run", "--help"},
                new String[] {"run", "-h", "--", "true"},
                new String[] {"run", "-V", "--", "true"},
                new String[] {"run", "--dest", "slack:C1", "--dest", "slack:C2", "--file", f, "--", "true"},
                new String[] {"run", "-v", "-v", "--dest", "slack:C1", "--file", f, "--", "true"},
                new String[] {"run", "--dest", "--file", f, "--", "true"},
                new String[] {"run", "--wait", "-1", "--dest", "slack:C1", "--file", f, "--", "true"},
                new String[] {"run", "--wait", "soon", "--dest", "slack:C1", "--file", f, "--", "true"},
                new String[] {"run", "--not-sent-exit", "x", "--dest", "slack:C1", "--file", f, "--", "true"},
                new String[] {"run", "--dest", "slack:C1", "--file", "a\0b", "--", "true"},
                new String[] {"run", "--destination", "slack:C1", "--file", f, "--", "true"},
                new String[] {"run", "--dest", "slack:C1", "--file", f, "--older-than", "1d", "--", "true"},
                new String[] {"run", "--dest", "slack:C1", "--file", f, "--wait"});
        for (String[] args : lines) {
            assertThat(QuickRun.parse(args, System::getenv)).as(String.join(" ", args)).isNull();
        }
    }

    @Test
    void environmentDefaults_areReadAsPicocliReadsThem_andOnesPicocliWouldInterpolateAreDeclined() {
        String[] args = {"run", "--dest", "slack:C1", "--file", "f", "--", "true"};
        Map<String, String> env = new HashMap<>(Map.of("ONCEGATE_CONNECT", "zk1:2181,zk2:2181", "ONCEGATE_HOST", "",
                "ONCEGATE_ZK_CLIENT_CONFIG", "tls.properties", "ONCEGATE_METRICS_TEXTFILE", "/var/lib/node/runs.prom"));

        RunCommand quick = QuickRun.parse(args, env::get);

        assertThat(quick.zookeeper.connection.connect).isEqualTo("zk1:2181,zk2:2181");
        assertThat(quick.zookeeper.connection.host).isEqualTo("");
        assertThat(quick.zookeeper.connection.zkClientConfig).isEqualTo("tls.properties");
        assertThat(quick.metricsTextfile).isEqualTo(Path.of("/var/lib/node/runs.prom"));
        assertThat(QuickRun.parse(args, name -> null).zookeeper.connection.connect).isEqualTo(ConnectOptions.DEFAULT_CONNECT);

        env.put("ONCEGATE_HOST", "$${HOSTNAME}");
        assertThat(QuickRun.parse(args, env::get)).isNull();
    }

    /** Options, values, forms and orders at random, plain and not: quick is picocli's or declined, never more. */
    @Test
    void randomCommandLines_areTakenAsPicocliTakesThem_orDeclined() throws Exception {
        long seed = Long.getLong("oncegate.quickrun.seed", System.nanoTime());
        System.out.println("QuickRunTest seed " + seed + " (replay: -Doncegate.quickrun.seed=" + seed + ")");
        Random random = new Random(seed);
        String f = Files.writeString(dir.resolve("report.txt"), "report\n").toString();
        List<String> names = List.of("--namespace", "--connect", "--connect-timeout", "--zk-client-config", "--auth",
                "--auth-file", "--host", "--state-dir", "--dest", "--dest-name", "--file", "--task-id", "--wait",
                "--not-sent-exit", "--shutdown-grace", "--timeout", "--result-fd", "--result-file", "--metrics-textfile",
                "--older-than", "--key", "-v", "--verbose", "-h", "--help", "-V");
        List<String> values = List.of("slack:C1", f, "/n", "10s", "1m30s", "PT2S", "0", "7", "007", "+3", "-1", "1.5",
                "abc", "", " ", "@x", "a=b", "-x", "--", "127.0.0.1:2181", "u:p", "r.json", "x.prom", "é");
        List<String> words = List.of("true", "-v", "--dest", "@x", "--", "sh", "-c", "exit 3", "");
        int accepted = 0;
        int tried = 3_000;
        for (int n = 0; n < tried; n++) {
            List<String> line = new ArrayList<>(List.of("run"));
            int options = random.nextInt(6);
            for (int o = 0; o < options; o++) {
                String name = names.get(random.nextInt(names.size()));
                if (name.startsWith("-v") || name.equals("--verbose") || name.equals("-h") || name.equals("--help")
                        || name.equals("-V")) {
                    line.add(name);
                } else if (random.nextBoolean()) {
                    line.add(name + "=" + values.get(random.nextInt(values.size())));
                } else {
                    line.add(name);
                    if (random.nextInt(10) > 0) {
                        line.add(values.get(random.nextInt(values.size())));
                    }
                }
            }
            if (random.nextInt(4) > 0) {
                line.addAll(List.of("--dest", "slack:C" + random.nextInt(3), "--file", f));
            }
            Collections.shuffle(line.subList(1, line.size()), random);
            if (random.nextInt(10) > 0) {
                line.add("--");
            }
            int rest = random.nextInt(4);
            for (int w = 0; w < rest; w++) {
                line.add(words.get(random.nextInt(words.size())));
            }
            String[] args = line.toArray(String[]::new);
            RunCommand quick = QuickRun.parse(args, System::getenv);
            if (quick == null) {
                continue;
            }
            accepted++;
            RunCommand full = picocli(args);
            assertThat(full).as("picocli refuses what quick took: %s (seed %d)", Arrays.toString(args), seed).isNotNull();
            assertThat(fields(quick)).as("%s (seed %d)", Arrays.toString(args), seed).isEqualTo(fields(full));
        }
        System.out.println("QuickRunTest: " + accepted + " of " + tried + " random command lines taken quickly");
        assertThat(accepted).as("seed %d", seed).isGreaterThan(tried / 20);
    }

    /** What picocli's parser makes of {@code args}, or null when it refuses them. */
    private static RunCommand picocli(String[] args) {
        try {
            CommandLine.ParseResult parsed = Main.commandLine(args).parseArgs(args);
            if (parsed.subcommand() == null || parsed.subcommand().isUsageHelpRequested()
                    || parsed.subcommand().isVersionHelpRequested()) {
                return null;
            }
            return (RunCommand) parsed.subcommand().commandSpec().userObject();
        } catch (CommandLine.ParameterException refused) {
            return null;
        }
    }

    /** Every instance field of {@code command} and of its mixins, by qualified name (picocli's own spec left out). */
    private static Map<String, Object> fields(Object command) throws IllegalAccessException {
        Map<String, Object> all = new LinkedHashMap<>();
        collect(command, "run", all);
        return all;
    }

    private static void collect(Object object, String prefix, Map<String, Object> into) throws IllegalAccessException {
        for (Class<?> c = object.getClass(); c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers()) || field.getType() == CommandLine.Model.CommandSpec.class) {
                    continue;
                }
                field.setAccessible(true);
                Object value = field.get(object);
                String name = prefix + "." + field.getName();
                if (value != null && value.getClass().getName().endsWith("Options")) {
                    collect(value, name, into);
                } else {
                    into.put(name, value);
                }
            }
        }
    }
}
