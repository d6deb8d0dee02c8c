package dev.oncegate.deploy;

import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names a PromQL expression selects: enough of PromQL for our dashboard and rules.
 * String literals, label matchers, ranges and grouping clauses are removed first; what is left
 * is an identifier that is not a function or aggregation (those are followed by a parenthesis),
 * not a keyword, and not part of a number or duration.
 */
final class PromQl {

    private static final Pattern STRINGS = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'");
    private static final Pattern MATCHERS = Pattern.compile("\\{[^{}]*}");
    private static final Pattern RANGES = Pattern.compile("\\[[^\\[\\]]*]");
    private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^()]*\\)");
    private static final Pattern IDENT = Pattern.compile("(?<![0-9.a-zA-Z_:$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\\s*\\()?");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without", "on",
            "ignoring", "group_left", "group_right", "inf", "nan", "Inf", "NaN");

    private PromQl() {
    }

    static Set<String> metricNames(String expr) {
        String rest = STRINGS.matcher(expr).replaceAll(" ");
        rest = MATCHERS.matcher(rest).replaceAll(" ");
        rest = RANGES.matcher(rest).replaceAll(" ");
        rest = GROUPING.matcher(rest).replaceAll(" ");
        Set<String> names = new TreeSet<>();
        Matcher m = IDENT.matcher(rest);
        while (m.find()) {
            if (m.group(2) == null && !KEYWORDS.contains(m.group(1))) {
                names.add(m.group(1));
            }
        }
        return names;
    }
}
