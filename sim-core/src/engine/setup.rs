//! A run set up: the scenario's fixed configuration, the state at time
//! 0, the recorder, and the first events (arrivals, autoscalers); and the
//! one-call runs.

use super::*;

/// Run a scenario whose trace's requests come from `feed` (see
/// [`Simulation::with_feed`]) to completion (or to a limit); Err when the
/// feed failed before the trace's last request.
pub fn run_with_feed(scenario: &ValidScenario, feed: Box<dyn TraceFeed>) -> Result<Report, String> {
    let mut sim = Simulation::with_feed(scenario, feed);
    sim.advance_until(u64::MAX);
    match sim.feed_failed() {
        Some(why) => Err(why.to_owned()),
        None => Ok(sim.report()),
    }
}

/// Run a scenario to completion (or to a limit) and return its report.
pub fn run(scenario: &ValidScenario) -> Report {
    run_timed(scenario, scenario.serving.profile().timing)
}

/// [`run`] with other step-time constants (calibration and its fits: see
/// [`Simulation::with_timing`]).
pub fn run_timed(scenario: &ValidScenario, timing: Timing) -> Report {
    let mut sim = Simulation::with_timing(scenario, timing);
    sim.advance_until(u64::MAX);
    sim.report()
}

impl Simulation {
    /// Set up a run of a validated scenario at time 0.
    pub fn new(scenario: &ValidScenario) -> Simulation {
        Self::with_timing(scenario, scenario.serving.profile().timing)
    }

    /// As [`Self::new`], with other step-time constants (for calibration and
    /// its fits); the KV cache is sized by the scenario's serving software.
    pub fn with_timing(scenario: &ValidScenario, timing: Timing) -> Simulation {
        let feed: Option<Box<dyn TraceFeed>> = match &scenario.workload.arrival {
            Arrival::Trace { requests, .. } if !requests.is_streamed() => {
                Some(Box::new(feed::Columns::new(requests.clone())))
            }
            _ => None,
        };
        Self::build(scenario, timing, feed)
    }

    /// Set up a run whose trace's requests come from `feed` (a scenario
    /// with a streamed trace, [`crate::scenario::TraceRequests::streamed`],
    /// runs only so). Each request is checked as it comes; one that does
    /// not fit the scenario's validated numbers stops the run, saying why.
    pub fn with_feed(scenario: &ValidScenario, feed: Box<dyn TraceFeed>) -> Simulation {
        Self::build(scenario, scenario.serving.profile().timing, Some(feed))
    }

    fn build(
        scenario: &ValidScenario,
        timing: Timing,
        feed: Option<Box<dyn TraceFeed>>,
    ) -> Simulation {
        let (cfg, feed, block_tokens) = Self::config(scenario, timing, feed);
        let st = Self::start_state(scenario, &cfg, feed, block_tokens);
        debug_assert!(
            st.replicas.len() == cfg.pools.iter().map(|p| p.replicas).sum::<usize>()
                && st.queues.len() == st.replicas.len()
                && st.scaling.len() == cfg.pools.len()
                && st.rr_next.len() == cfg.pools.len(),
            "a run starts with one slot, queue and router state per replica and pool"
        );
        let mut sim = Simulation {
            rec: Self::recorder(scenario, &cfg),
            api: scenario.api.as_ref().map(|a| ApiState::new(a, cfg.seed)),
            cfg,
            st,
        };
        if let Arrival::Stages { stages } = &scenario.workload.arrival {
            sim.rec.set_stages(stages, sim.cfg.duration_ns);
        }
        sim.start_arrivals();
        sim.start_autoscalers();
        sim
    }

    /// The run's fixed settings, and the trace's feed with its hash block
    /// size when the arrivals replay a trace.
    fn config(
        scenario: &ValidScenario,
        timing: Timing,
        feed: Option<Box<dyn TraceFeed>>,
    ) -> (Config, Option<feed::Feeding>, Option<u32>) {
        let mut first = 0;
        let pools: Vec<pools::PoolCfg> = (0..scenario.pool_count())
            .map(|i| {
                let own = scenario.pool(i).profile().timing;
                let pool =
                    pools::PoolCfg::new(scenario, i, first, if i == 0 { timing } else { own });
                first += pool.replicas;
                pool
            })
            .collect();
        let rules = pools::rules(scenario);
        let duration_ns = secs_to_ns(scenario.duration_s);
        let seed = scenario.seed;
        // The engine's copy of the arrivals, a trace's numbers only (its
        // requests come from the feed).
        let arrival = arrivals::engine_copy(&scenario.workload.arrival);
        let (feed, block_tokens) = match &arrival {
            Arrival::Trace {
                requests,
                prefix_block_tokens,
            } => (
                Some(feed::Feeding::new(
                    feed.unwrap_or_else(|| Box::new(feed::Columns::new(Default::default()))),
                    requests.stats(),
                    scenario.workload.classes.len(),
                )),
                *prefix_block_tokens,
            ),
            _ => (None, None),
        };
        let cfg = Config {
            seed,
            duration_ns,
            max_events: scenario.limits.max_events,
            max_sim_ns: secs_to_ns(time_limit_s(scenario)),
            classes: scenario
                .workload
                .classes
                .iter()
                .enumerate()
                .map(|(i, k)| ClassSpec::new(k, scenario.class_slo(i)))
                .collect(),
            class_cdf: arrivals::class_cdf(&scenario.workload.classes),
            arrival,
            think: match &scenario.workload.arrival {
                Arrival::ClosedLoop { think_time_s, .. } => Some(think_time_s.sampler()),
                _ => None,
            },
            splits: pools::splits(&rules),
            autoscales: pools.iter().any(|p| p.scale.is_some()),
            rules,
            slo: scenario.slo.clone(),
            class_backend: pools::class_backends(scenario),
            api_fallback: scenario
                .api
                .iter()
                .flat_map(|a| &a.fallback)
                .filter_map(|name| scenario.target_named(name))
                .map(pools::backend)
                .collect(),
            hashed: block_tokens.is_some(),
            pools,
        };
        (cfg, feed, block_tokens)
    }

    /// The run's state at time 0: empty queues, every replica as its pool
    /// starts.
    fn start_state(
        scenario: &ValidScenario,
        cfg: &Config,
        feed: Option<feed::Feeding>,
        block_tokens: Option<u32>,
    ) -> State {
        let seed = cfg.seed;
        State {
            now: 0,
            events: EventQueue::default(),
            processed: 0,
            rng: Rngs::new(seed),
            requests: Slab::default(),
            tasks: Slab::default(),
            replicas: pools::replicas(&cfg.pools),
            queues: pools::queues(&cfg.pools),
            waiting: 0,
            in_frontend: 0,
            abandoned_waiting: 0,
            abandoned_running: 0,
            rr_next: vec![0; cfg.pools.len()],
            index: pools::indices(&cfg.pools),
            admit_counter: 0,
            conversations: 0,
            users: Users::default(),
            stopped: None,
            left_out: None,
            finishing: None,
            watch: None,
            deadlines: (0..scenario.workload.classes.len())
                .map(|_| timeout::Deadlines::default())
                .collect(),
            scaling: cfg
                .pools
                .iter()
                .map(|p| autoscale::PoolScale::new(p.initial as u32))
                .collect(),
            scale_checks: 0,
            up_total: cfg.pools.iter().map(|p| p.initial as u32).sum(),
            feed,
            prefix_hashes: prefix::PrefixHashes::new(block_tokens),
        }
    }

    /// What the run measures: per class, per pool when there are several
    /// (or an autoscaler), reasoning tokens when a class has them.
    fn recorder(scenario: &ValidScenario, cfg: &Config) -> Recorder {
        Recorder::new(
            scenario.workload.classes.len(),
            cfg.duration_ns,
            if cfg.pools.len() > 1 || cfg.autoscales {
                cfg.pools.len()
            } else {
                0
            },
            scenario
                .workload
                .classes
                .iter()
                .any(|k| k.reasoning_tokens.is_some()),
        )
    }
}

impl Rngs {
    /// One stream per source of randomness, all from the scenario's seed.
    fn new(seed: u64) -> Rngs {
        Rngs {
            arrivals: Stream::new(seed, StreamId::ARRIVALS),
            lengths: Stream::new(seed, StreamId::LENGTHS),
            jitter: Stream::new(seed, StreamId::JITTER),
            think: Stream::new(seed, StreamId::THINK),
            prefix: Stream::new(seed, StreamId::PREFIX),
            turns: Stream::new(seed, StreamId::TURNS),
            reasoning: Stream::new(seed, StreamId::REASONING),
            routing: Stream::new(seed, StreamId::ROUTING),
        }
    }
}

/// The run's time limit: `limits.max_sim_time_s`, raised (within
/// `bounds::SIM_TIME_S`) to the arrival window plus the longest batch
/// window, so that every batch answer, due within its window, comes.
fn time_limit_s(scenario: &crate::scenario::Scenario) -> f64 {
    let batch_window = scenario
        .api
        .as_ref()
        .into_iter()
        .flat_map(|a| a.tiers.iter())
        .filter_map(|t| t.batch.as_ref().map(|b| b.window_s))
        .fold(0.0, f64::max);
    if batch_window > 0.0 {
        scenario
            .limits
            .max_sim_time_s
            .max(scenario.duration_s + batch_window)
            .min(crate::scenario::bounds::SIM_TIME_S)
    } else {
        scenario.limits.max_sim_time_s
    }
}
