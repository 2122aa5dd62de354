//! The price table: what each capability costs, in USD per unit.
//! Self-hosted default: everything free. Infrai's published price for a
//! publish is 0.00002 USD per message (`--prices queue.publish=0.00002`).

use std::collections::BTreeMap;

use onceq_types::capability::{self, Billing, CAPABILITIES};

/// Prices keyed by capability id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    prices: BTreeMap<&'static str, f64>,
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
            prices.insert(cap.id, price);
        }
        Ok(Self { prices })
    }

    /// Price of one unit of a capability.
    pub fn price(&self, id: &str) -> f64 {
        self.prices.get(id).copied().unwrap_or(0.0)
    }

    /// Cost of `units` units, rounded to a millionth of a cent.
    pub fn cost(&self, id: &str, units: usize) -> f64 {
        (self.price(id) * units as f64 * 1e8).round() / 1e8
    }

    /// The billing block of every capability, for discovery.
    pub fn billing(&self) -> Vec<(&'static capability::CapabilityDef, Billing)> {
        CAPABILITIES
            .iter()
            .map(|c| {
                let price = self.price(c.id);
                (
                    c,
                    Billing {
                        is_billable: price > 0.0,
                        price_usd: price,
                        unit: c.unit.to_owned(),
                        currency: "USD".into(),
                    },
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let t = PriceTable::parse("queue.publish=0.00002").unwrap();
        assert_eq!(t.price("queue.publish"), 0.00002);
        assert_eq!(t.cost("queue.publish", 3), 0.00006);
        assert_eq!(t.price("queue.consume"), 0.0);
        assert!(PriceTable::parse("queue.nope=1").is_err());
        assert!(PriceTable::parse("queue.publish=-1").is_err());
        assert!(PriceTable::parse("queue.publish").is_err());
        assert_eq!(PriceTable::parse("").unwrap(), PriceTable::default());
    }
}
