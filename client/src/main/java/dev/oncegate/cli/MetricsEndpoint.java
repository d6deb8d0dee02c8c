package dev.oncegate.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * A Prometheus registry served over HTTP by the JDK's {@code HttpServer}: {@code GET /metrics}
 * answers the scrape in the text format 0.0.4, {@code /} says where the metrics are, anything
 * else is 404 (and any method but GET or HEAD 405). Requests are handled one at a time on the
 * server's dispatcher thread: a scrape only reads the registry.
 *
 * <p>Thread-safe: {@link #close} may be called from any thread (a shutdown hook), more than once.
 */
final class MetricsEndpoint implements AutoCloseable {

    static final String PATH = "/metrics";
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final AtomicBoolean closed = new AtomicBoolean();

    private MetricsEndpoint(HttpServer server) {
        this.server = server;
    }

    /**
     * Serves {@code registry} on {@code address} (port 0: any free port, see {@link #address}).
     *
     * @throws IllegalArgumentException when the address cannot be listened on (in use, not this
     *                                  host's), naming it: bad input, exit 2
     */
    static MetricsEndpoint serve(PrometheusMeterRegistry registry, InetSocketAddress address, String option) {
        HttpServer server;
        try {
            server = HttpServer.create(address, 0);
        } catch (BindException e) {
            throw new IllegalArgumentException(option + ": cannot listen on " + text(address) + ": " + e.getMessage()
                    + " (another process on that port? a host address this machine does not have?)", e);
        } catch (IOException e) {
            throw new IllegalArgumentException(option + ": cannot listen on " + text(address) + ": " + e, e);
        }
        server.createContext("/", exchange -> {
            try (exchange) {
                respond(exchange, registry);
            }
        });
        server.start();
        return new MetricsEndpoint(server);
    }

    private static void respond(HttpExchange exchange, PrometheusMeterRegistry registry) throws IOException {
        String method = exchange.getRequestMethod();
        if (!method.equals("GET") && !method.equals("HEAD")) {
            exchange.getResponseHeaders().set("Allow", "GET, HEAD");
            send(exchange, 405, "text/plain; charset=utf-8", "only GET and HEAD\n");
            return;
        }
        String path = exchange.getRequestURI().getPath();
        if (path.equals(PATH)) {
            send(exchange, 200, CONTENT_TYPE, registry.scrape());
        } else if (path.equals("/")) {
            send(exchange, 200, "text/plain; charset=utf-8", "oncegate: Prometheus metrics at " + PATH + "\n");
        } else {
            send(exchange, 404, "text/plain; charset=utf-8", "not found: the metrics are at " + PATH + "\n");
        }
    }

    private static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /** The address listened on, with the port chosen when 0 was asked for. */
    InetSocketAddress address() {
        return server.getAddress();
    }

    /** {@code http://HOST:PORT/metrics}. */
    String url() {
        return "http://" + text(address()) + PATH;
    }

    static String text(InetSocketAddress address) {
        String host = address.getAddress() != null ? address.getAddress().getHostAddress() : address.getHostString();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
    }

    /** Stops listening at once; a scrape under way is cut off. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            server.stop(0);
        }
    }
}
