//! Request counts by route and status, latencies, and the work in flight, in Prometheus' text
//! format for `GET /metrics`.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    /// CPU jobs running on the worker pool (timed-out jobs included until they end).
    pub running: IntGauge,
    pub timeouts: IntCounter,
    /// Jobs whose work stopped at its deadline (after their request was answered 503).
    pub cancelled: IntCounter,
    /// Requests refused at once because --max-pending requests were already in flight.
    pub rejected: IntCounter,
    /// Connections open now.
    pub connections: IntGauge,
    /// Connections closed by the service before their client was done, by reason:
    /// `evicted` (idle, closed to make room under --max-connections), `refused` (new, at
    /// --max-connections with every connection in a request).
    pub dropped: IntCounterVec,
}

/// Seconds; from a tiny DAG's lower bound to the default timeout.
const BUCKETS: [f64; 14] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

impl Metrics {
    pub fn new() -> Metrics {
        let requests = IntCounterVec::new(
            Opts::new("graphene_http_requests_total", "HTTP requests answered, by route and status"),
            &["route", "status"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new("graphene_http_request_duration_seconds", "Time to answer a request, by route")
                .buckets(BUCKETS.to_vec()),
            &["route"],
        )
        .expect("valid metric");
        let running =
            IntGauge::new("graphene_jobs_running", "Scheduling jobs running on the worker pool").expect("valid metric");
        let timeouts = IntCounter::new("graphene_jobs_timed_out_total", "Requests answered 503 after --timeout")
            .expect("valid metric");
        let cancelled = IntCounter::new(
            "graphene_jobs_cancelled_total",
            "Jobs whose computation stopped at the request's deadline, freeing their worker",
        )
        .expect("valid metric");
        let rejected = IntCounter::new(
            "graphene_requests_rejected_total",
            "Requests answered 503 at once because --max-pending requests were in flight",
        )
        .expect("valid metric");
        let connections = IntGauge::new("graphene_connections_open", "HTTP connections open").expect("valid metric");
        let dropped = IntCounterVec::new(
            Opts::new(
                "graphene_connections_dropped_total",
                "Connections the service closed to stay within --max-connections: evicted (idle), refused (new)",
            ),
            &["reason"],
        )
        .expect("valid metric");
        let registry = Registry::new();
        registry.register(Box::new(connections.clone())).expect("registered once");
        registry.register(Box::new(dropped.clone())).expect("registered once");
        registry.register(Box::new(cancelled.clone())).expect("registered once");
        registry.register(Box::new(rejected.clone())).expect("registered once");
        registry.register(Box::new(requests.clone())).expect("registered once");
        registry.register(Box::new(latency.clone())).expect("registered once");
        registry.register(Box::new(running.clone())).expect("registered once");
        registry.register(Box::new(timeouts.clone())).expect("registered once");
        Metrics { registry, requests, latency, running, timeouts, cancelled, rejected, connections, dropped }
    }

    pub fn observe(&self, route: &str, status: u16, seconds: f64) {
        self.requests.with_label_values(&[route, &status.to_string()]).inc();
        self.latency.with_label_values(&[route]).observe(seconds);
    }

    pub fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut out).expect("text encoding never fails");
        String::from_utf8(out).expect("the text format is UTF-8")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_histogram_in_text_format() {
        let m = Metrics::new();
        m.observe("/v1/schedule", 200, 0.003);
        m.observe("/v1/schedule", 200, 0.2);
        m.observe("/v1/schedule", 400, 0.0001);
        let text = m.render();
        assert!(text.contains("graphene_http_requests_total{route=\"/v1/schedule\",status=\"200\"} 2"), "{text}");
        assert!(text.contains("graphene_http_requests_total{route=\"/v1/schedule\",status=\"400\"} 1"), "{text}");
        assert!(
            text.contains("graphene_http_request_duration_seconds_bucket{route=\"/v1/schedule\",le=\"0.005\"} 2"),
            "{text}"
        );
        assert!(text.contains("graphene_http_request_duration_seconds_count{route=\"/v1/schedule\"} 3"), "{text}");
        assert!(text.contains("# TYPE graphene_http_request_duration_seconds histogram"), "{text}");
    }
}
