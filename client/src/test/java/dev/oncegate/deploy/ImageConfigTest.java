package dev.oncegate.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The container image's configuration, without building it (ImageBuildIT, profile {@code image},
 * builds and runs it): the daemonless build (build.sh) and the published-base variant
 * (Dockerfile) make the same image: non-root user, tini as PID 1 in front of the CLI, one jar path.
 */
class ImageConfigTest {

    static final String ENTRYPOINT = "/usr/bin/tini -- /usr/local/bin/oncegate";
    static final String USER = "10001:10001";
    static final String JAR = "/opt/oncegate/oncegate.jar";

    static Map<String, String> imageEnv() {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : RepoFiles.read("deploy/image/image.env").split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                String[] kv = line.split("=", 2);
                env.put(kv[0].strip(), kv[1].strip());
            }
        }
        return env;
    }

    static String zooKeeperVersion() {
        Matcher m = Pattern.compile("<zookeeper\\.version>([^<]+)</zookeeper\\.version>").matcher(RepoFiles.read("pom.xml"));
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    @Test
    void imageEnv_namesTheProjectVersion() {
        Map<String, String> env = imageEnv();
        assertThat(env).containsOnlyKeys("IMAGE_NAME", "IMAGE_TAG").containsEntry("IMAGE_NAME", "oncegate");
        Matcher version = Pattern.compile("<artifactId>oncegate-parent</artifactId>\\s*<version>([^<]+)</version>").matcher(RepoFiles.read("pom.xml"));
        assertThat(version.find()).isTrue();
        assertThat(env).containsEntry("IMAGE_TAG", version.group(1));
    }

    @Test
    void daemonlessBuild_isNonRoot_withTiniAsInit_fromDebianPackages() throws Exception {
        String build = RepoFiles.read("deploy/image/build.sh");
        assertThat(Files.isExecutable(RepoFiles.path("deploy/image/build.sh"))).isTrue();
        assertThat(build).contains("--include=openjdk-17-jre-headless,tini")
                .contains("--config.entrypoint /usr/bin/tini --config.entrypoint -- --config.entrypoint /usr/local/bin/oncegate")
                .contains("--config.user " + USER).contains("--config.workingdir /home/oncegate")
                .contains("$1/opt/oncegate/oncegate.jar").contains("oncegate:x:10001:10001:");
        assertThat(build).as("no registry, no daemon").doesNotContain("docker build").doesNotContain("docker run").doesNotContain("FROM ");
        Process syntax = new ProcessBuilder("bash", "-n", RepoFiles.path("deploy/image/build.sh").toString()).inheritIO().start();
        try {
            assertThat(syntax.waitFor(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            syntax.destroyForcibly();
        }
        assertThat(syntax.exitValue()).isZero();
        assertThat(RepoFiles.read("deploy/image/oncegate")).contains("-jar " + JAR);
        assertThat(Files.isExecutable(RepoFiles.path("deploy/image/oncegate"))).isTrue();
    }

    @Test
    void publishedBaseVariant_makesTheSameImage() {
        String dockerfile = RepoFiles.read("deploy/image/Dockerfile");
        assertThat(dockerfile).contains("USER " + USER).contains("WORKDIR /home/oncegate")
                .contains("ENTRYPOINT [\"/usr/bin/tini\", \"--\", \"/usr/local/bin/oncegate\"]")
                .contains("COPY client/target/oncegate.jar " + JAR).contains("COPY deploy/image/oncegate /usr/local/bin/oncegate")
                .contains("install -y --no-install-recommends tini").contains("--uid 10001 --gid 10001")
                .contains("-t " + imageEnv().get("IMAGE_NAME") + ":" + imageEnv().get("IMAGE_TAG"));
    }
}
