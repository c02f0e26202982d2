//! A busy machine beside a run: one busy loop per core, at the run's own priority, as a loaded
//! CI machine or a host whose workers compute between their calls (`llmctl simulate --busy`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Busy loops that run until this is dropped.
pub struct Busy {
    stop: Arc<AtomicBool>,
    loops: Vec<JoinHandle<()>>,
}

impl Busy {
    /// `loops` busy loops (the machine's cores when `None`).
    pub fn start(loops: Option<usize>) -> Busy {
        let n = loops.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        let stop = Arc::new(AtomicBool::new(false));
        let loops = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        Busy { stop, loops }
    }

    /// How many loops run.
    pub fn loops(&self) -> usize {
        self.loops.len()
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for l in self.loops.drain(..) {
            let _ = l.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loops_stop_when_dropped() {
        let busy = Busy::start(Some(2));
        assert_eq!(busy.loops(), 2);
        let stop = busy.stop.clone();
        drop(busy);
        assert!(stop.load(Ordering::Relaxed));
    }
}
