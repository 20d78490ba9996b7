//! The learned ranker: a logistic model over a named feature list, its weights a small
//! checked-in file (`sessions.json`, `sessions-project.json`) written by `memcc bench ranker`,
//! which also writes the report of how it was fit and what it scored. Each feature enters as
//! itself and as `ln(1 + |x|)` (counts, ranks and distances read better on a log scale),
//! standardised by the means and scales of the data it was fit on.

use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};

/// A fitted logistic model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Logistic {
    /// The features it reads, by name ([`super::FEATURES`]), in its order.
    pub features: Vec<String>,
    /// Per input (each feature, then each feature's log), the mean and scale it is standardised by.
    pub mean: Vec<f64>,
    pub scale: Vec<f64>,
    pub weights: Vec<f64>,
    pub intercept: f64,
    /// What it was fit on, and how (for the report and a reader of the file).
    #[serde(default)]
    pub fit: serde_json::Value,
}

impl Logistic {
    /// The inputs of one row of named features: each feature, then each one's `ln(1 + |x|)`.
    pub fn inputs(values: &[f64]) -> Vec<f64> {
        values.iter().copied().chain(values.iter().map(|x| x.abs().ln_1p())).collect()
    }

    /// The linear score (log-odds) of a row of the model's features.
    pub fn log_odds(&self, values: &[f64]) -> f64 {
        self.log_odds_of_inputs(&Self::inputs(values))
    }

    /// The log-odds of a row already made into inputs ([`Self::inputs`]).
    pub fn log_odds_of_inputs(&self, inputs: &[f64]) -> f64 {
        self.intercept
            + inputs
                .iter()
                .zip(&self.mean)
                .zip(&self.scale)
                .zip(&self.weights)
                .map(|(((x, m), s), w)| w * (x - m) / s)
                .sum::<f64>()
    }

    /// The probability that a row is relevant.
    pub fn probability(&self, values: &[f64]) -> f64 {
        self.probability_of_inputs(&Self::inputs(values))
    }

    /// The probability of a row already made into inputs.
    pub fn probability_of_inputs(&self, inputs: &[f64]) -> f64 {
        1.0 / (1.0 + (-self.log_odds_of_inputs(inputs)).exp())
    }

    /// Whether the file is whole: one mean, scale and weight per input, every number finite,
    /// every scale positive, every feature one the ranker computes.
    pub fn check(&self) -> Result<(), String> {
        let n = 2 * self.features.len();
        if self.mean.len() != n || self.scale.len() != n || self.weights.len() != n {
            return Err(format!(
                "{n} inputs, but {} means, {} scales, {} weights",
                self.mean.len(),
                self.scale.len(),
                self.weights.len()
            ));
        }
        if let Some(f) = self.features.iter().find(|f| !super::FEATURES.contains(&f.as_str())) {
            return Err(format!("unknown feature {f:?}"));
        }
        let finite = self.mean.iter().chain(&self.weights).chain([&self.intercept]).all(|x| x.is_finite());
        if !finite || !self.scale.iter().all(|s| s.is_finite() && *s > 0.0) {
            return Err("a number that is not finite, or a scale that is not positive".into());
        }
        Ok(())
    }
}

/// The session ranker's two models: without the project, and for a host that tells each
/// session's project.
#[derive(Debug, Clone, PartialEq)]
pub struct Models {
    pub plain: Logistic,
    pub project: Logistic,
}

impl Models {
    /// The model for a question asked with (or without) its project.
    pub fn for_project(&self, told: bool) -> &Logistic {
        if told { &self.project } else { &self.plain }
    }
}

/// The models MemCC ships, read once; `None` (logged) when a file does not read, which the tests
/// rule out.
pub static SHIPPED: LazyLock<Option<Arc<Models>>> = LazyLock::new(|| {
    let read = |name: &str, text: &str| match serde_json::from_str::<Logistic>(text)
        .map_err(|e| e.to_string())
        .and_then(|m| m.check().map(|()| m))
    {
        Ok(m) => Some(m),
        Err(e) => {
            tracing::error!(model = name, error = %e, "the shipped ranking model does not read; ranking by words and meaning alone");
            None
        }
    };
    Some(Arc::new(Models {
        plain: read("sessions.json", include_str!("sessions.json"))?,
        project: read("sessions-project.json", include_str!("sessions-project.json"))?,
    }))
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_models_read_and_check() {
        let shipped = SHIPPED.as_ref().expect("the shipped models read");
        for m in [&shipped.plain, &shipped.project] {
            m.check().unwrap();
        }
        assert!(shipped.project.features.iter().any(|f| f == "same_project"));
        assert!(!shipped.plain.features.iter().any(|f| f.contains("project")));
    }

    /// The rows `memcc bench ranker` kept with the file score as it says: the fit and the
    /// engine read the weights alike.
    #[test]
    fn the_shipped_models_score_their_examples_as_their_fit_did() {
        let shipped = SHIPPED.as_ref().expect("the shipped models read");
        for m in [&shipped.plain, &shipped.project] {
            assert_eq!(
                m.fit["features_of_examples"],
                serde_json::json!(super::super::FEATURES),
                "the file's feature list"
            );
            let examples = m.fit["examples"].as_array().expect("examples in the file");
            assert!(examples.len() >= 5);
            for e in examples {
                let row: Vec<f64> = serde_json::from_value(e[0].clone()).unwrap();
                let p = e[1].as_f64().unwrap();
                let got = m.probability(&super::super::pick(&m.features, &row));
                assert!((got - p).abs() < 1e-9, "{got} vs {p}");
            }
        }
    }

    #[test]
    fn a_heavier_feature_raises_the_probability_by_its_weight_s_sign() {
        let m = Logistic {
            features: vec!["crm3_norm".into()],
            mean: vec![0.5, 0.4],
            scale: vec![0.2, 0.1],
            weights: vec![2.0, 0.0],
            intercept: -1.0,
            fit: serde_json::Value::Null,
        };
        assert!(m.probability(&[1.0]) > m.probability(&[0.2]));
        assert!((m.log_odds(&[0.5]) - -1.0).abs() < 1e-12);
        let mut broken = m.clone();
        broken.scale[1] = 0.0;
        assert!(broken.check().is_err());
    }
}
