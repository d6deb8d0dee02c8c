package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's complete Java examples (every {@code java} block that starts with its imports:
 * the worker of "Java API" and the test of "Testing your own workers"), compiled exactly as
 * printed against this module's test classpath — the library, the kit, Curator, Micrometer,
 * slf4j, JUnit and AssertJ — so the page cannot drift from the API. The shorter snippets (TLS,
 * the meter filter) are fragments and are not compiled.
 */
class ReadmeExamplesTest {

    /** Surefire runs in the module directory, one below the repository's root. */
    private static final Path README = Path.of("..", "README.md");
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern CLASS_NAME = Pattern.compile("(?m)^(?:public )?class (\\w+)");

    @TempDir
    Path dir;

    @Test
    void completeJavaExamples_compileExactlyAsPrinted() throws IOException {
        List<String> examples = new ArrayList<>();
        Matcher block = JAVA_BLOCK.matcher(Files.readString(README, StandardCharsets.UTF_8));
        while (block.find()) {
            if (block.group(1).startsWith("import ")) {
                examples.add(block.group(1));
            }
        }

        assertThat(examples).as("the complete examples in README.md").hasSize(2)
                .anySatisfy(e -> assertThat(e).contains("class ReportSender", "try (CuratorFramework curator", "try (Gate gate",
                        "checkpoint(\"picker-open\") instanceof Decision.Stop"))
                .anySatisfy(e -> assertThat(e).contains("class ReportWorkerTest"));
        for (String example : examples) {
            compile(example);
        }
    }

    private void compile(String source) throws IOException {
        Matcher name = CLASS_NAME.matcher(source);
        assertThat(name.find()).as("a top-level class in:\n" + source).isTrue();
        Path file = dir.resolve(name.group(1) + ".java");
        Files.writeString(file, source, StandardCharsets.UTF_8);
        Path classes = Files.createDirectories(dir.resolve("classes-" + name.group(1)));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter diagnostics = new StringWriter();
        boolean compiled = javac.getTask(diagnostics, null, null,
                List.of("-classpath", System.getProperty("java.class.path"), "-d", classes.toString(),
                        "-proc:none"),
                null, javac.getStandardFileManager(null, null, StandardCharsets.UTF_8).getJavaFileObjects(file))
                .call();

        assertThat(compiled).as(name.group(1) + " from README.md does not compile:\n" + diagnostics + "\n" + source).isTrue();
    }
}
