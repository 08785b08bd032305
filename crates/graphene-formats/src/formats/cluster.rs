//! Cluster files and the `--capacity` flag.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::model::ClusterSpec;

pub fn parse(text: &str) -> Result<ClusterSpec> {
    let spec: ClusterSpec = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    // Before anything is laid out per machine.
    spec.check_size()?;
    Ok(spec)
}

pub fn load(path: &Path) -> Result<ClusterSpec> {
    let text = super::read_text(path)?;
    parse(&text).map_err(|e| e.in_file(path))
}

/// Parses `cpu=16,mem=64,disk=200,net=1250`.
pub fn parse_capacity(s: &str) -> Result<BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) =
            part.split_once('=').ok_or_else(|| Error::Usage(format!("--capacity: '{part}' is not NAME=VALUE")))?;
        let value: f64 =
            v.trim().parse().map_err(|_| Error::Usage(format!("--capacity: '{v}' for {k} is not a number")))?;
        if !value.is_finite() || value < 0.0 {
            return Err(Error::Usage(format!("--capacity: {k}={value} must be a finite number >= 0")));
        }
        if out.insert(k.trim().to_string(), value).is_some() {
            return Err(Error::Usage(format!("--capacity: {k} is given twice")));
        }
    }
    if out.is_empty() {
        return Err(Error::Usage("--capacity: no resources given".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RACKS: &str = r#"{"machines": [{"count": 2, "capacity": {"cpu": 1}},
        {"count": 3, "capacity": {"cpu": 1}, "speed": 2}],
      "bandwidth": 0.5,
      "pair_bandwidth": [{"groups": [0, 0], "bandwidth": 4}, {"groups": [1, 0], "bandwidth": 2}]}"#;

    #[test]
    fn pair_bandwidth_overrides_the_cluster_bandwidth_in_both_directions() {
        let net = parse(RACKS).unwrap().network();
        // Machines 0-1 are group 0, 2-4 group 1.
        assert_eq!(net.transfer(8.0, 0, 1), 2.0, "within group 0");
        assert_eq!(net.transfer(8.0, 1, 3), 4.0, "between the groups");
        assert_eq!(net.transfer(8.0, 4, 0), 4.0, "the other way");
        assert_eq!(net.transfer(8.0, 2, 4), 16.0, "within group 1: the cluster bandwidth");
        assert_eq!(net.transfer(8.0, 3, 3), 0.0, "same machine");
        assert!(net.has_pair_bandwidth());
    }

    /// The closed form per group pair against the definition: the mean over the n(n + 1) / 2
    /// unordered machine pairs (self-pairs cost nothing) of 1 / bandwidth.
    #[test]
    fn mean_inverse_bandwidth_is_the_mean_over_machine_pairs() {
        for text in [RACKS, r#"{"machines": [{"count": 7, "capacity": {"cpu": 1}}], "bandwidth": 3}"#] {
            let net = parse(text).unwrap().network();
            let n = net.speeds.len() as u32;
            let mut sum = 0.0;
            for a in 0..n {
                for b in a + 1..n {
                    sum += 1.0 / net.bandwidth_between(a, b);
                }
            }
            let want = sum / (n * (n + 1) / 2) as f64;
            assert!((net.mean_inverse_bandwidth() - want).abs() < 1e-12, "{} vs {want}", net.mean_inverse_bandwidth());
        }
    }

    #[test]
    fn pair_bandwidth_survives_writing_the_cluster_back() {
        let spec = parse(RACKS).unwrap();
        let again = parse(&serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(spec, again);
        assert_eq!(again.network(), spec.network());
    }

    #[test]
    fn bad_pair_bandwidth_is_an_error_naming_the_entry() {
        for (from, to, want) in [
            (
                r#""groups": [1, 0], "bandwidth": 2"#,
                r#""groups": [1, 2], "bandwidth": 2"#,
                "pair_bandwidth[1].groups: group 2 does not exist",
            ),
            (
                r#""groups": [1, 0], "bandwidth": 2"#,
                r#""groups": [1, 0], "bandwidth": 0"#,
                "pair_bandwidth[1].bandwidth: 0 is not a finite number > 0",
            ),
            (
                r#""groups": [1, 0], "bandwidth": 2"#,
                r#""groups": [0, 0], "bandwidth": 2"#,
                "pair_bandwidth[1].groups: the pair [0, 0] is given twice",
            ),
            (
                r#""groups": [1, 0], "bandwidth": 2"#,
                r#""groups": [1], "bandwidth": 2"#,
                "line 4, column 75: invalid length 1, expected an array of length 2",
            ),
        ] {
            let text = RACKS.replace(from, to);
            assert_ne!(text, RACKS);
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn splitting_into_machines_keeps_every_pair_bandwidth_and_speed() {
        let mut spec = parse(RACKS).unwrap();
        let before = spec.network();
        spec.split_into_machines();
        assert_eq!(spec.machines.len(), 5);
        let after = spec.network();
        assert_eq!(after.speeds, before.speeds);
        for a in 0..5 {
            for b in 0..5 {
                assert_eq!(after.bandwidth_between(a, b), before.bandwidth_between(a, b), "{a}-{b}");
            }
        }
    }
}

#[cfg(test)]
mod check_fits_tests {
    use crate::formats::native;
    use crate::model::{Cluster, ClusterSpec};

    fn cluster(groups: &[(usize, f64)]) -> Cluster {
        let spec: ClusterSpec = serde_json::from_value(serde_json::json!({
            "machines": groups.iter().map(|(n, cpu)| serde_json::json!({"count": n, "capacity": {"cpu": cpu}})).collect::<Vec<_>>()
        }))
        .unwrap();
        spec.resolve(&["cpu".to_string()]).unwrap()
    }

    #[test]
    fn check_fits_finds_the_one_machine_that_fits_and_names_the_first_task_that_fits_none() {
        // Tasks alternate between demands only the last machine (or no machine) can hold.
        let dag = native::parse(
            r#"{"resources":["cpu"],"stages":[
                {"id":"a","tasks":5000,"duration":1,"demands":{"cpu":8}},
                {"id":"b","tasks":[{"duration":1,"demands":{"cpu":1}},{"duration":1,"demands":{"cpu":8}},
                                   {"duration":1,"demands":{"cpu":0.5}},{"duration":1,"demands":{"cpu":9}}]}]}"#,
            "d",
        )
        .unwrap();
        let big_last = cluster(&[(20_000, 0.5), (1, 1.0), (1, 8.0)]);
        let err = big_last.check_fits(&dag).unwrap_err().to_string();
        assert!(err.contains("task b[3] demands cpu=9"), "{err}");
        let bigger = cluster(&[(20_000, 0.5), (1, 1.0), (1, 9.0)]);
        assert!(bigger.check_fits(&dag).is_ok());
        let small = cluster(&[(3, 4.0)]);
        assert!(small.check_fits(&dag).unwrap_err().to_string().contains("task a[0]"));
    }
}
