//! The price table: what each capability costs, in USD per unit.
//! Self-hosted default: everything free. Infrai's published price for a
//! publish is 0.00002 USD per message (`--prices queue.publish=0.00002`).
//!
//! Money is counted in integer micro-USD (0.000001 USD), so metering adds
//! exactly; a price must be a whole number of micro-USD.

use std::collections::BTreeMap;

use onceq_types::capability::{self, Billing, CAPABILITIES, CapabilityDef};

/// Prices keyed by capability id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    prices: BTreeMap<&'static str, u64>,
}

impl PriceTable {
    /// Parses `id=price,id=price`; ids must be known capabilities and prices
    /// finite and non-negative.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut prices = BTreeMap::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (id, price) = part
                .split_once('=')
                .ok_or_else(|| format!("price {part:?} must look like capability=usd"))?;
            let cap = capability::capability(id.trim())
                .ok_or_else(|| format!("unknown capability {id:?} in price table"))?;
            let price: f64 = price
                .trim()
                .parse()
                .map_err(|_| format!("price of {id} is not a number: {price:?}"))?;
            if !price.is_finite() || price < 0.0 {
                return Err(format!("price of {id} must be a non-negative number"));
            }
            let micros = (price * 1e6).round();
            if (micros - price * 1e6).abs() > 1e-6 || micros > 1e12 {
                return Err(format!(
                    "price of {id} must be a whole number of micro-USD (0.000001), at most 1000000"
                ));
            }
            prices.insert(cap.id, micros as u64);
        }
        Ok(Self { prices })
    }

    /// Price of one unit of a capability, in USD.
    pub fn price(&self, cap: &CapabilityDef) -> f64 {
        onceq_types::account::micros_to_usd(self.micros(cap))
    }

    /// Price of one unit of a capability, in micro-USD.
    pub fn micros(&self, cap: &CapabilityDef) -> u64 {
        self.prices.get(cap.id).copied().unwrap_or(0)
    }

    /// Cost of `units` units, in micro-USD.
    pub fn cost_micros(&self, cap: &CapabilityDef, units: usize) -> u64 {
        self.micros(cap).saturating_mul(units as u64)
    }

    /// Cost of `units` units, in USD.
    pub fn cost(&self, cap: &CapabilityDef, units: usize) -> f64 {
        onceq_types::account::micros_to_usd(self.cost_micros(cap, units))
    }

    /// The billing block of every capability, for discovery.
    pub fn billing(&self) -> Vec<(&'static CapabilityDef, Billing)> {
        CAPABILITIES
            .iter()
            .map(|c| {
                let price = self.price(c);
                (
                    c,
                    Billing {
                        is_billable: price > 0.0,
                        price_usd: price,
                        unit: c.unit.as_str().to_owned(),
                        currency: "USD".into(),
                    },
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use onceq_types::capability::{CONSUME, PUBLISH};

    use super::*;

    #[test]
    fn parses_and_rejects() {
        let t = PriceTable::parse("queue.publish=0.00002").unwrap();
        assert_eq!(t.price(&PUBLISH), 0.00002);
        assert_eq!(t.cost(&PUBLISH, 3), 0.00006);
        assert_eq!(t.price(&CONSUME), 0.0);
        assert!(PriceTable::parse("queue.nope=1").is_err());
        assert!(PriceTable::parse("queue.publish=-1").is_err());
        assert!(PriceTable::parse("queue.publish").is_err());
        assert!(PriceTable::parse("queue.publish=0.0000001").is_err());
        assert_eq!(t.cost_micros(&PUBLISH, 3), 60);
        assert_eq!(PriceTable::parse("").unwrap(), PriceTable::default());
    }
}
