//! A crowded key's line, on this limiter: the units it was given, cooled, returned and
//! taken back.

use super::*;

impl Engine {
    /// Units the fleet's line gave `key` (and the keys that mirror its quota), each valid from
    /// its moment, with its amount by `Dimension::index`. False when the key is not known
    /// here or is not on a line.
    pub fn add_fleet_units(&mut self, key: &str, units: &[(Instant, [f64; 4])], now: Now) -> bool {
        let Some(&id) = self.index.get(key) else {
            return false;
        };
        if !self.keys[id].fleet.is_some_and(|p| p.line) {
            return false;
        }
        for k in self.with_mirrors(id) {
            for b in self.keys[k].buckets.iter_mut().filter(|b| b.on_line()) {
                let d = b.dimension().index();
                let given: Vec<(Instant, f64)> = units.iter().map(|(t, a)| (*t, a[d])).collect();
                b.add_units(&given, now.mono);
            }
        }
        self.pump(now);
        true
    }

    /// A cooldown on `name` until `until`: on the keys it holds back that are on a line, the
    /// units valid before it ends are not the provider's to take any more (it refills its
    /// own bucket meanwhile); kept, they would all go at once as it ends, from every host.
    pub(in crate::engine) fn cool_lines(&mut self, name: &str, until: Instant, now: Instant) {
        for k in self.keys.iter_mut().filter(|k| {
            k.fleet.is_some_and(|p| p.line)
                && (k.name == name
                    || k.name
                        .strip_prefix(name)
                        .is_some_and(|r| r.starts_with('/')))
        }) {
            for b in k.buckets.iter_mut().filter(|b| b.on_line()) {
                b.cool_line(until, now);
            }
        }
    }

    /// The line took `returned` (by `Dimension::index`) of what `key`'s settled requests gave
    /// back (and so did the keys that mirror its quota, whose requests are the same).
    pub fn fleet_line_took(&mut self, key: &str, returned: [f64; 4]) {
        let Some(&id) = self.index.get(key) else {
            return;
        };
        for k in self.with_mirrors(id) {
            for b in &mut self.keys[k].buckets {
                b.take_line_returned(returned[b.dimension().index()]);
            }
        }
    }

    /// Takes back, from every key on a line, the units given and not valid yet (the limiter
    /// stops): per key on a line, when each unit would have been valid (maybe none) and the
    /// amount of one unit by `Dimension::index` (its requests bucket's units, or its first
    /// bucket's on the line).
    pub fn take_back_fleet_units(&mut self, now: Now) -> Vec<(String, Vec<Instant>, [f64; 4])> {
        let mut back = Vec::new();
        for k in self
            .keys
            .iter_mut()
            .filter(|k| k.fleet.is_some_and(|p| p.line))
        {
            let mut pending: Vec<(usize, Vec<(Instant, f64)>)> = k
                .buckets
                .iter_mut()
                .filter(|b| b.on_line())
                .map(|b| {
                    b.refill(now.mono);
                    (b.dimension().index(), b.take_back_units())
                })
                .collect();
            pending.sort_by_key(|(d, _)| *d);
            let times: Vec<Instant> = pending
                .first()
                .map(|(_, first)| first.iter().map(|p| p.0).collect())
                .unwrap_or_default();
            let mut amounts = [0.0; 4];
            if !times.is_empty() {
                for (d, units) in &pending {
                    amounts[*d] = units.iter().map(|u| u.1).sum::<f64>() / times.len() as f64;
                }
            }
            back.push((k.name.clone(), times, amounts));
        }
        self.pump(now);
        back
    }
}
