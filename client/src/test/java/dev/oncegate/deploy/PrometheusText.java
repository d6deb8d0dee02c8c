package dev.oncegate.deploy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The samples of a Prometheus text-format scrape (or textfile): series name, labels, value; and
 * each family's TYPE and HELP. Public for the CLI's process tests, which scrape the exporter and
 * read {@code run --metrics-textfile}'s file.
 *
 * <p>Immutable and thread-safe.
 */
public record PrometheusText(List<Sample> samples, Map<String, String> types, Map<String, String> helps) {

    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\d+)?$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    public static PrometheusText parse(String text) {
        List<Sample> samples = new ArrayList<>();
        Map<String, String> types = new LinkedHashMap<>();
        Map<String, String> helps = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.split("\\s+");
                types.put(parts[2], parts[3]);
                continue;
            }
            if (line.startsWith("# HELP ")) {
                String[] parts = line.split(" ", 4);
                helps.put(parts[2], parts.length > 3 ? parts[3] : "");
                continue;
            }
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line.strip());
            if (!m.matches()) {
                throw new IllegalArgumentException("not a sample line: " + line);
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
        }
        return new PrometheusText(List.copyOf(samples), Map.copyOf(types), Map.copyOf(helps));
    }

    public Set<String> names() {
        Set<String> names = new TreeSet<>();
        samples.forEach(s -> names.add(s.name()));
        return names;
    }

    public List<Sample> series(String name) {
        return samples.stream().filter(s -> s.name().equals(name)).toList();
    }

    /**
     * The value of the one sample of {@code name} whose labels include {@code labels} (name,
     * value, name, value…); fails when there is not exactly one.
     */
    public double value(String name, String... labels) {
        return only(name, labels).value();
    }

    /** The sum of the samples of {@code name} whose labels include {@code labels}. */
    public double sum(String name, String... labels) {
        return matching(name, labels).stream().mapToDouble(Sample::value).sum();
    }

    private Sample only(String name, String... labels) {
        List<Sample> found = matching(name, labels);
        if (found.size() != 1) {
            throw new AssertionError("expected one sample " + name + " " + List.of(labels) + ", found " + found);
        }
        return found.get(0);
    }

    private List<Sample> matching(String name, String... labels) {
        return series(name).stream().filter(s -> {
            for (int i = 0; i + 1 < labels.length; i += 2) {
                if (!labels[i + 1].equals(s.labels().get(labels[i]))) {
                    return false;
                }
            }
            return true;
        }).toList();
    }
}
