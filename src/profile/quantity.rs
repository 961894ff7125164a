//! Kubernetes resource quantities (`96`, `768Gi`, `500m`, `1e3`): parsed exactly (integer
//! nano-units, no floating point), compared, added, and written back the way the API server
//! writes them (`Quantity.String()`), so that committed output never churns on spelling.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// A non-negative quantity. Equality and order are by value: `1Gi == 1024Mi`.
#[derive(Clone, Copy, Debug)]
pub struct Quantity {
    nanos: i128,
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

/// Why a quantity string is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    #[error("`{0}` is not a Kubernetes quantity")]
    Syntax(String),
    #[error("`{0}` is too large")]
    Overflow(String),
    #[error("`{0}` is negative")]
    Negative(String),
}

pub(crate) const PATTERN: &str =
    "^(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][-+]?[0-9]+))?$";

const NANO: i128 = 1_000_000_000;

impl Quantity {
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        let err = || QuantityError::Syntax(text.to_owned());
        let overflow = || QuantityError::Overflow(text.to_owned());
        let body = text.strip_prefix('+').unwrap_or(text);
        if body.starts_with('-') {
            return Err(QuantityError::Negative(text.to_owned()));
        }
        let num_end = body
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(body.len());
        let (number, suffix) = body.split_at(num_end);
        let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
        if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
            return Err(err());
        }
        // Value as digits × 10^exp10 (exact), before the suffix.
        let digits = format!("{int_part}{frac_part}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 30 {
            return Err(overflow());
        }
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| err())?
        };
        let mut exp10 = -(frac_part.len() as i32);
        let (format, mult2) = match suffix {
            "" => (Format::DecimalSi, 0),
            "n" => {
                exp10 -= 9;
                (Format::DecimalSi, 0)
            }
            "u" => {
                exp10 -= 6;
                (Format::DecimalSi, 0)
            }
            "m" => {
                exp10 -= 3;
                (Format::DecimalSi, 0)
            }
            "k" => {
                exp10 += 3;
                (Format::DecimalSi, 0)
            }
            "M" => {
                exp10 += 6;
                (Format::DecimalSi, 0)
            }
            "G" => {
                exp10 += 9;
                (Format::DecimalSi, 0)
            }
            "T" => {
                exp10 += 12;
                (Format::DecimalSi, 0)
            }
            "P" => {
                exp10 += 15;
                (Format::DecimalSi, 0)
            }
            "E" => {
                exp10 += 18;
                (Format::DecimalSi, 0)
            }
            "Ki" => (Format::BinarySi, 10),
            "Mi" => (Format::BinarySi, 20),
            "Gi" => (Format::BinarySi, 30),
            "Ti" => (Format::BinarySi, 40),
            "Pi" => (Format::BinarySi, 50),
            "Ei" => (Format::BinarySi, 60),
            s if s.starts_with(['e', 'E']) => {
                let e: i32 = s[1..].parse().map_err(|_| err())?;
                if !(-40..=40).contains(&e) {
                    return Err(overflow());
                }
                exp10 += e;
                (Format::DecimalExponent, 0)
            }
            _ => return Err(err()),
        };
        // nanos = mantissa × 10^(exp10 + 9) × 2^mult2, rounded up to whole nano-units as
        // Kubernetes does.
        let scale = exp10 + 9;
        let mut nanos = mantissa;
        if scale >= 0 {
            for _ in 0..scale {
                nanos = nanos.checked_mul(10).ok_or_else(overflow)?;
            }
        } else {
            let div = 10_i128.checked_pow((-scale) as u32).ok_or_else(overflow)?;
            nanos = (nanos + div - 1) / div;
        }
        nanos = nanos.checked_mul(1_i128 << mult2).ok_or_else(overflow)?;
        // Larger than anything Kubernetes or Azure can hold (Ei × 1000).
        if nanos > (1_i128 << 70) * NANO {
            return Err(overflow());
        }
        Ok(Self { nanos, format })
    }

    pub fn from_units(units: u64) -> Self {
        Self {
            nanos: i128::from(units) * NANO,
            format: Format::DecimalSi,
        }
    }

    pub fn zero() -> Self {
        Self::from_units(0)
    }

    /// An exact value in nano-units, written in decimal SI (`5820m`).
    pub fn from_nanos(nanos: i128) -> Self {
        Self {
            nanos,
            format: Format::DecimalSi,
        }
    }

    /// A number of bytes, written in binary SI where it divides (`109538Mi`).
    pub fn from_bytes(bytes: i128) -> Self {
        Self {
            nanos: bytes.saturating_mul(NANO),
            format: Format::BinarySi,
        }
    }

    /// Another amount written the way `self` is (binary SI stays binary SI), as Kubernetes
    /// keeps the format of the first operand when it adds or subtracts quantities.
    #[must_use]
    pub fn with_nanos(self, nanos: i128) -> Self {
        Self {
            nanos,
            format: self.format,
        }
    }

    pub fn is_zero(self) -> bool {
        self.nanos == 0
    }

    /// How many times `per` fits into `self`, rounded down (`None` when `per` is zero).
    pub fn fits(self, per: Self) -> Option<u64> {
        if per.nanos <= 0 {
            return None;
        }
        u64::try_from(self.nanos / per.nanos).ok()
    }

    /// A short human spelling for messages: `95.3` CPUs, `1.9Ti`, `107Gi`, `500m`.
    pub fn human(self) -> String {
        if self.format == Format::BinarySi && self.nanos >= 1024 * NANO {
            let bytes = self.nanos as f64 / NANO as f64;
            let mut v = bytes;
            let mut unit = 0;
            let units = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
            while v >= 1024.0 && unit < 6 {
                v /= 1024.0;
                unit += 1;
            }
            let rounded = (v * 10.0).floor() / 10.0;
            if (rounded - rounded.trunc()).abs() < f64::EPSILON {
                return format!("{}{}", rounded as i64, units[unit]);
            }
            return format!("{rounded:.1}{}", units[unit]);
        }
        if self.nanos % NANO != 0 && self.nanos > NANO && self.format == Format::DecimalSi {
            // Whole units with two decimals read better than `94940m`.
            let v = (self.nanos as f64 / NANO as f64 * 100.0).floor() / 100.0;
            return format!("{v}");
        }
        self.canonical()
    }

    /// Exact value in nano-units, for arithmetic in rules.
    pub fn nanos(self) -> i128 {
        self.nanos
    }

    /// Value in whole units, rounded up (a pod needing 0.5 CPU needs one CPU slot of a node).
    pub fn as_f64(self) -> f64 {
        self.nanos as f64 / NANO as f64
    }

    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            nanos: self.nanos.saturating_add(other.nanos),
            format: if self.nanos == 0 {
                other.format
            } else {
                self.format
            },
        }
    }

    /// `self − other`, never below zero (what is left of a capacity).
    #[must_use]
    pub fn minus(self, other: Self) -> Self {
        Self {
            nanos: self.nanos.saturating_sub(other.nanos).max(0),
            format: self.format,
        }
    }

    #[must_use]
    pub fn times(self, n: u64) -> Self {
        Self {
            nanos: self.nanos.saturating_mul(i128::from(n)),
            format: self.format,
        }
    }

    /// The API server's canonical spelling.
    pub fn canonical(self) -> String {
        let v = self.nanos;
        if v == 0 {
            return "0".into();
        }
        if self.format == Format::BinarySi && v % NANO == 0 && v / NANO >= 1024 {
            let mut units = v / NANO;
            let mut k = 0;
            while k < 6 && units % 1024 == 0 {
                units /= 1024;
                k += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][k];
            return format!("{units}{suffix}");
        }
        let mut mantissa = v;
        let mut exp = -9;
        while mantissa % 1000 == 0 && exp < 18 {
            mantissa /= 1000;
            exp += 3;
        }
        if self.format == Format::DecimalExponent {
            return if exp == 0 {
                mantissa.to_string()
            } else {
                format!("{mantissa}e{exp}")
            };
        }
        let suffix = match exp {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => "",
        };
        format!("{mantissa}{suffix}")
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}
impl Eq for Quantity {}
impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.canonical())
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a Kubernetes quantity such as \"96\" or \"768Gi\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
                Quantity::parse(v).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity::from_units(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                u64::try_from(v)
                    .map(Quantity::from_units)
                    .map_err(|_| E::custom(QuantityError::Negative(v.to_string())))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                Quantity::parse(&v.to_string()).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for Quantity {
    fn schema_name() -> Cow<'static, str> {
        "Quantity".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "a non-negative Kubernetes quantity such as \"96\", \"500m\" or \"768Gi\"",
            "anyOf": [
                {"type": "string", "pattern": PATTERN, "maxLength": 64},
                {"type": "number", "minimum": 0}
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        Quantity::parse(s).unwrap().canonical()
    }

    #[test]
    fn canonical_spelling_matches_the_api_server() {
        assert_eq!(canon("96"), "96");
        assert_eq!(canon("768Gi"), "768Gi");
        assert_eq!(canon("1024Mi"), "1Gi");
        assert_eq!(canon("1.5Gi"), "1536Mi");
        assert_eq!(canon("0.5"), "500m");
        assert_eq!(canon("1000"), "1k");
        assert_eq!(canon("1e3"), "1e3");
        assert_eq!(canon("100m"), "100m");
        assert_eq!(canon("512Ki"), "512Ki");
        assert_eq!(canon("0"), "0");
        assert_eq!(canon("500Mi"), "500Mi");
    }

    #[test]
    fn compares_by_value() {
        assert_eq!(Quantity::parse("1Gi"), Quantity::parse("1024Mi"));
        assert!(Quantity::parse("769Gi").unwrap() > Quantity::parse("768Gi").unwrap());
        assert_eq!(
            Quantity::parse("48")
                .unwrap()
                .plus(Quantity::parse("48").unwrap()),
            Quantity::from_units(96)
        );
    }

    #[test]
    fn refuses_what_kubernetes_refuses() {
        for bad in [
            "768GB",
            "1.2.3",
            "",
            "Gi",
            "12x",
            "1e400",
            "-1",
            "99999999999999999999999999999999999",
        ] {
            assert!(Quantity::parse(bad).is_err(), "{bad}");
        }
    }
}
