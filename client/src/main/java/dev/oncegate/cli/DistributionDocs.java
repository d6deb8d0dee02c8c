package dev.oncegate.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.stream.Stream;

import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * Writes the distribution's man pages and bash completion script from the picocli model that
 * parses the command line, so that they say what {@code --help} says. The build runs it once,
 * at {@code package}, as {@code java -cp oncegate.jar dev.oncegate.cli.DistributionDocs DIR}
 * (client/pom.xml); it is not a subcommand.
 *
 * <p>Into {@code DIR}: {@code man/man1/oncegate.1} (the root command and its subcommands),
 * {@code man/man1/oncegate-NAME.1} for every visible subcommand, and
 * {@code bash-completion/completions/oncegate}, which is what {@code oncegate generate-completion}
 * prints. {@code DIR} is the distribution's {@code share/}, where man and bash-completion look
 * for a program's pages and completions when its {@code bin/} is on the PATH.
 */
public final class DistributionDocs {

    private DistributionDocs() {
    }

    /** {@code DistributionDocs DIR}. */
    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: java -cp oncegate.jar " + DistributionDocs.class.getName() + " OUTPUT_DIR");
            System.exit(ExitCode.USAGE);
        }
        write(Main.commandLine(), Path.of(args[0]));
    }

    /** Writes every page and the completion script of {@code root} into {@code dir}. */
    static void write(CommandLine root, Path dir) throws IOException {
        String version = String.join(" ", root.getCommandSpec().version());
        Path man = Files.createDirectories(dir.resolve("man").resolve("man1"));
        writeUtf8(man.resolve(pageName(root.getCommandSpec()) + ".1"), manPage(root.getCommandSpec(), version));
        for (CommandLine sub : visibleSubcommands(root.getCommandSpec())) {
            writeUtf8(man.resolve(pageName(sub.getCommandSpec()) + ".1"), manPage(sub.getCommandSpec(), version));
        }
        Path completions = Files.createDirectories(dir.resolve("bash-completion").resolve("completions"));
        writeUtf8(completions.resolve(root.getCommandName()), AutoComplete.bash(root.getCommandName(), root));
    }

    /** {@code oncegate} for the root, {@code oncegate-run} for {@code oncegate run}. */
    static String pageName(CommandSpec spec) {
        return spec.qualifiedName("-");
    }

    /** The man page (troff, man macros) of one command. */
    static String manPage(CommandSpec spec, String version) {
        StringBuilder out = new StringBuilder();
        String name = pageName(spec);
        out.append(".\\\" Generated from the picocli model by the oncegate build (DistributionDocs); do not edit.\n");
        out.append(".TH \"").append(escape(name.toUpperCase(Locale.ROOT))).append("\" 1 \"\" \"")
                .append(escape(version)).append("\" \"oncegate manual\"\n");
        out.append(".nh\n.ad l\n"); // no hyphenation, ragged right: option names and identifiers stay whole

        out.append(".SH NAME\n").append(escape(name));
        List<String> description = lines(spec.usageMessage().description());
        if (!description.isEmpty()) {
            out.append(" \\- ").append(escape(description.get(0)));
        }
        out.append('\n');

        out.append(".SH SYNOPSIS\n.nf\n");
        CommandLine.Help help = new CommandLine.Help(spec, CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF));
        for (String line : help.synopsis(0).stripTrailing().split("\\R")) {
            out.append(escape(line)).append('\n');
        }
        out.append(".fi\n");

        List<String> header = lines(spec.usageMessage().header());
        if (!header.isEmpty() || !description.isEmpty()) {
            out.append(".SH DESCRIPTION\n");
            for (String line : concat(header, description)) {
                out.append(".PP\n").append(escape(line)).append('\n');
            }
        }

        List<PositionalParamSpec> positionals = spec.positionalParameters().stream().filter(p -> !p.hidden()).toList();
        if (!positionals.isEmpty()) {
            out.append(".SH ARGUMENTS\n");
            for (PositionalParamSpec positional : positionals) {
                item(out, "\\fI" + escape(positional.paramLabel()) + "\\fR", lines(positional.renderedDescription()));
            }
        }

        List<OptionSpec> options = spec.options().stream().filter(o -> !o.hidden()).toList();
        if (!options.isEmpty()) {
            out.append(".SH OPTIONS\n");
            for (OptionSpec option : options) {
                StringJoiner names = new StringJoiner(", ");
                for (String optionName : option.names()) {
                    names.add("\\fB" + escape(optionName) + "\\fR");
                }
                String label = option.arity().max() > 0 ? "=\\fI" + escape(option.paramLabel()) + "\\fR" : "";
                item(out, names + label, lines(option.renderedDescription()));
            }
        }

        List<CommandLine> subcommands = visibleSubcommands(spec);
        if (!subcommands.isEmpty()) {
            out.append(".SH COMMANDS\n");
            for (CommandLine sub : subcommands) {
                List<String> subDescription = lines(sub.getCommandSpec().usageMessage().description());
                item(out, "\\fB" + escape(sub.getCommandName()) + "\\fR",
                        List.of((subDescription.isEmpty() ? "" : subDescription.get(0) + " ")
                                + "See " + pageName(sub.getCommandSpec()) + "(1)."));
            }
        }

        Map<String, String> exitCodes = spec.usageMessage().exitCodeList();
        if (!exitCodes.isEmpty()) {
            out.append(".SH \"EXIT STATUS\"\n");
            exitCodes.forEach((code, meaning) -> item(out, "\\fB" + escape(code.strip()) + "\\fR", lines(meaning)));
        }

        List<String> footer = lines(spec.usageMessage().footer());
        if (!footer.isEmpty()) {
            out.append(".SH NOTES\n");
            for (String line : footer) {
                out.append(".PP\n").append(escape(line)).append('\n');
            }
        }

        out.append(".SH \"SEE ALSO\"\n");
        StringJoiner seeAlso = new StringJoiner(",\n");
        if (spec.parent() != null) {
            seeAlso.add("\\fB" + escape(pageName(spec.root())) + "\\fR(1)");
        }
        for (CommandLine sub : subcommands) {
            seeAlso.add("\\fB" + escape(pageName(sub.getCommandSpec())) + "\\fR(1)");
        }
        out.append(seeAlso).append('\n');
        return out.toString();
    }

    /** A tagged paragraph: {@code tag} on its line, then {@code body}, one line each. */
    private static void item(StringBuilder out, String tag, List<String> body) {
        out.append(".TP\n").append(tag).append('\n');
        for (int i = 0; i < body.size(); i++) {
            if (i > 0) {
                out.append(".br\n");
            }
            out.append(escape(body.get(i))).append('\n');
        }
    }

    private static List<CommandLine> visibleSubcommands(CommandSpec spec) {
        return spec.subcommands().values().stream().distinct()
                .filter(sub -> !sub.getCommandSpec().usageMessage().hidden()).toList();
    }

    /**
     * Help text as picocli prints it: each element through {@link String#format} (so {@code %n}
     * breaks a line and {@code %%} is a percent sign), split into lines, blank lines dropped.
     */
    private static List<String> lines(String... text) {
        return Arrays.stream(text)
                .flatMap(t -> String.format(Locale.ROOT, t).lines())
                .map(String::strip)
                .filter(line -> !line.isEmpty())
                .toList();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return Stream.concat(a.stream(), b.stream()).toList();
    }

    /**
     * One line of text for troff: backslashes and hyphens escaped (an option's {@code --name}
     * must stay two ASCII hyphens when copied from the page), and a leading {@code .} or
     * {@code '} kept from being read as a request.
     */
    static String escape(String text) {
        String escaped = text.replace("\\", "\\e").replace("-", "\\-");
        return escaped.startsWith(".") || escaped.startsWith("'") ? "\\&" + escaped : escaped;
    }

    private static void writeUtf8(Path file, String text) throws IOException {
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
