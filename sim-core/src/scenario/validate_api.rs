//! Validation of the hosted-API section: tiers, limits, client policy, routes,
//! and requests that no limit could ever admit.

use super::validate::Checker;
use super::{Scenario, bounds};
use crate::api::{
    Api, CacheMode, ClientPolicy, LimitStyle, Limiter, PromptCache, ProviderTier, SELF_HOSTED,
    Service,
};

impl Scenario {
    pub(super) fn validate_api(&self, c: &mut Checker) {
        let Some(api) = &self.api else { return };
        let n = api.tiers.len();
        if n == 0 || n > 16 {
            c.problems
                .push(format!("api.tiers must have 1..=16 tiers, got {n}"));
        }
        for i in 0..n.min(16) {
            validate_tier(api, i, c);
        }
        c.range_u(
            "api.rate_limit_multiplier",
            u64::from(api.rate_limit_multiplier),
            1,
            1000,
        );
        if let Some(cap) = api.concurrency_cap {
            c.range_u("api.concurrency_cap", u64::from(cap), 1, 10_000_000);
        }
        validate_client(&api.client, c);
        self.validate_backends(api, c);
        if !c.problems.is_empty() {
            return;
        }
        self.validate_admission(api, c);
    }

    /// The default backend, the fallback chain and the routes name
    /// backends that exist, with the services their tiers offer.
    fn validate_backends(&self, api: &Api, c: &mut Checker) {
        let backend_ok = |b: &str| self.target_named(b).is_some();
        if !backend_ok(&api.default_backend) {
            c.problems.push(format!(
                "api.default_backend must be \"{SELF_HOSTED}\", a pool or a tier name, got {:?}",
                api.default_backend
            ));
        }
        if let Some(b) = &api.breaker {
            c.problems.extend(b.problems("api.breaker"));
        }
        if let Some(h) = &api.hedge {
            c.problems.extend(h.problems("api.hedge", &api.tiers));
        }
        for (i, f) in api.fallback.iter().enumerate() {
            if !backend_ok(f) {
                c.problems.push(format!(
                    "api.fallback[{i}] must be \"{SELF_HOSTED}\", a pool or a tier name, got {f:?}"
                ));
            }
        }
        if api.fallback.len() > crate::api::MAX_FALLBACKS {
            c.problems.push(format!(
                "api.fallback names {} backends, at most {} may follow one another",
                api.fallback.len(),
                crate::api::MAX_FALLBACKS
            ));
        }
        if api.routes.len() > bounds::CLASSES {
            c.problems.push(format!(
                "api.routes must have at most {} routes, got {}",
                bounds::CLASSES,
                api.routes.len()
            ));
        }
        for (i, r) in api.routes.iter().take(bounds::CLASSES).enumerate() {
            let f = format!("api.routes[{i}]");
            if !self.workload.classes.iter().any(|k| k.name == r.class) {
                c.problems.push(format!(
                    "{f}.class {:?} is not a class of workload.classes",
                    r.class
                ));
            }
            if !backend_ok(&r.backend) {
                c.problems.push(format!(
                    "{f}.backend must be \"{SELF_HOSTED}\", a pool or a tier name, got {:?}",
                    r.backend
                ));
            }
            if r.flex && r.fast {
                c.problems.push(format!(
                    "{f}: a route asks for one service, fast or flex, not both"
                ));
            } else if r.service() != Service::Standard
                && !api
                    .tiers
                    .iter()
                    .any(|t| t.name == r.backend && t.offers(r.service()))
            {
                let v = if r.fast { "fast" } else { "flex" };
                c.problems.push(format!(
                    "{f}.{v} needs a tier with a {v} variant, and {:?} has none",
                    r.backend
                ));
            }
        }
    }

    /// A request that can never fit the limits would be retried forever:
    /// refuse the scenario when the class's largest request is known to
    /// exceed them.
    fn validate_admission(&self, api: &Api, c: &mut Checker) {
        for (i, k) in self.workload.classes.iter().enumerate() {
            let Some(tier) = self.backend_of(&k.name).and_then(|(t, _)| api.tiers.get(t)) else {
                continue;
            };
            let Some(input) = k.input_tokens.upper_bound() else {
                continue;
            };
            if let Some(b) = &tier.batch {
                // A batch tier admits by its queue, not its rate limits.
                if libm::round(input) as u64 > b.enqueued_tokens {
                    c.problems.push(format!(
                        "workload.classes[{i}] ({}): its largest request ({} input tokens) can never enter tier {:?}'s batch queue of {} enqueued tokens",
                        k.name,
                        libm::round(input),
                        tier.name,
                        b.enqueued_tokens
                    ));
                }
                continue;
            }
            let limiter = Limiter::new(&tier.limits, api.rate_limit_multiplier);
            if let Err(e) = limiter.fits(libm::round(input) as u64, u64::from(k.max_tokens)) {
                c.problems.push(format!(
                    "workload.classes[{i}] ({}): its largest request ({} input + max_tokens {}) can never be admitted by tier {:?}: {e}",
                    k.name,
                    libm::round(input),
                    k.max_tokens,
                    tier.name
                ));
            }
        }
    }
}

/// One tier: its name, speeds, prices and variants.
fn validate_tier(api: &Api, i: usize, c: &mut Checker) {
    let t = &api.tiers[i];
    let f = format!("api.tiers[{i}]");
    if t.name.is_empty() || t.name.len() > 64 || t.name == SELF_HOSTED {
        c.problems.push(format!(
            "{f}.name must be 1..=64 bytes and not \"{SELF_HOSTED}\", got {:?}",
            t.name
        ));
    }
    if api.tiers[..i].iter().any(|o| o.name == t.name) {
        c.problems
            .push(format!("{f}.name {:?} is used by an earlier tier", t.name));
    }
    t.ttft_s
        .validate(&format!("{f}.ttft_s"), 3600.0, &mut c.problems);
    t.output_tokens_per_s
        .validate(&format!("{f}.output_tokens_per_s"), 1e6, &mut c.problems);
    if t.output_tokens_per_s.mean() <= 0.0 || t.output_tokens_per_s.upper_bound() == Some(0.0) {
        let d = &t.output_tokens_per_s;
        c.problems.push(format!(
            "{f}.output_tokens_per_s.{} must make the mean output speed > 0 tokens/s, got a mean of {}",
            d.size_field(),
            crate::format::show(d.mean())
        ));
    }
    c.positive_f(
        &format!("{f}.input_tokens_per_s"),
        t.input_tokens_per_s,
        1e9,
        " tokens/s",
    );
    c.range_f(
        &format!("{f}.usd_per_mtok_input"),
        t.usd_per_mtok_input,
        0.0,
        10_000.0,
        " $",
    );
    c.range_f(
        &format!("{f}.usd_per_mtok_output"),
        t.usd_per_mtok_output,
        0.0,
        10_000.0,
        " $",
    );
    if let Some(fast) = &t.fast {
        fast.output_tokens_per_s.validate(
            &format!("{f}.fast.output_tokens_per_s"),
            1e6,
            &mut c.problems,
        );
        c.range_f(
            &format!("{f}.fast.price_multiplier"),
            fast.price_multiplier,
            1.0,
            100.0,
            "",
        );
    }
    if let Some(flex) = &t.flex {
        c.problems.extend(flex.problems(&format!("{f}.flex")));
    }
    if let Some(p) = &t.provisioned {
        c.problems.extend(p.problems(&format!("{f}.provisioned")));
    }
    if let Some(cache) = &t.prompt_cache {
        validate_cache(cache, &f, t.usd_per_mtok_input, c);
    }
    if let Some(e) = &t.errors {
        c.problems.extend(e.problems(&format!("{f}.errors")));
    }
    validate_batch(t, &f, c);
    validate_limits(t, &f, c);
}

/// A batch tier's window, turnaround and queue, and nothing a batch tier
/// cannot have.
fn validate_batch(t: &ProviderTier, f: &str, c: &mut Checker) {
    let Some(b) = &t.batch else { return };
    c.positive_f(
        &format!("{f}.batch.window_s"),
        b.window_s,
        7.0 * 86_400.0,
        " s",
    );
    b.turnaround_s.validate(
        &format!("{f}.batch.turnaround_s"),
        7.0 * 86_400.0,
        &mut c.problems,
    );
    c.range_u(
        &format!("{f}.batch.enqueued_tokens"),
        b.enqueued_tokens,
        1,
        1_000_000_000_000,
    );
    if t.prompt_cache.is_some() || t.fast.is_some() || t.flex.is_some() || t.provisioned.is_some() {
        c.problems.push(format!(
                "{f}: a batch tier has no prompt cache, fast or flex variant or provisioned units here; give them to a tier of its own"
            ));
    }
}

/// A tier's rate limits, as its provider's style counts them.
fn validate_limits(t: &ProviderTier, f: &str, c: &mut Checker) {
    let l = &t.limits;
    if l.style != LimitStyle::Azure {
        c.range_u(&format!("{f}.limits.rpm"), l.rpm, 1, 1_000_000_000);
    }
    c.range_u(&format!("{f}.limits.tpm"), l.tpm, 1, 100_000_000_000);
    // Daily caps: 0 is none.
    c.range_u(&format!("{f}.limits.rpd"), l.rpd, 0, 1_000_000_000_000);
    c.range_u(&format!("{f}.limits.tpd"), l.tpd, 0, 100_000_000_000_000);
    c.range_u(
        &format!("{f}.limits.max_concurrent"),
        l.max_concurrent,
        0,
        10_000_000,
    );
    if l.style == LimitStyle::Anthropic {
        c.range_u(
            &format!("{f}.limits.output_tpm"),
            l.output_tpm,
            1,
            100_000_000_000,
        );
    }
    if l.style == LimitStyle::Azure && l.tpm < 1000 {
        c.problems.push(format!(
            "{f}.limits.tpm must be ≥ 1000 for Azure (6 RPM per 1,000 TPM, enforced per 10 s), got {}",
            l.tpm
        ));
    }
}

/// The client's policy: retries, backoff or its queue.
fn validate_client(client: &ClientPolicy, c: &mut Checker) {
    match client {
        ClientPolicy::FailFast => {}
        ClientPolicy::SdkRetries { max_retries } => {
            c.range_u("api.client.max_retries", u64::from(*max_retries), 0, 100)
        }
        ClientPolicy::FullJitter {
            max_retries,
            base_s,
            cap_s,
        } => {
            c.range_u("api.client.max_retries", u64::from(*max_retries), 0, 100);
            c.positive_f("api.client.base_s", *base_s, 3600.0, " s");
            c.positive_f("api.client.cap_s", *cap_s, 3600.0, " s");
        }
        ClientPolicy::Queue {
            max_queue,
            max_wait_s,
        } => {
            c.range_u(
                "api.client.max_queue",
                u64::from(*max_queue),
                1,
                u64::from(bounds::QUEUE),
            );
            c.positive_f("api.client.max_wait_s", *max_wait_s, bounds::TIME_S, " s");
        }
    }
}

/// A tier's prompt cache: prices within the input price's reach, a lifetime
/// of at most a day, lengths within the token bound.
fn validate_cache(cache: &PromptCache, tier: &str, usd_per_mtok_input: f64, c: &mut Checker) {
    let f = format!("{tier}.prompt_cache");
    c.range_f(
        &format!("{f}.usd_per_mtok_cached"),
        cache.usd_per_mtok_cached,
        0.0,
        10_000.0,
        " $",
    );
    if cache.usd_per_mtok_cached > usd_per_mtok_input {
        c.problems.push(format!(
            "{f}.usd_per_mtok_cached must not exceed the tier's input price ({}), got {}",
            crate::format::show(usd_per_mtok_input),
            crate::format::show(cache.usd_per_mtok_cached)
        ));
    }
    c.positive_f(&format!("{f}.ttl_s"), cache.ttl_s, 86_400.0, " s");
    c.range_u(
        &format!("{f}.min_tokens"),
        u64::from(cache.min_tokens),
        1,
        u64::from(bounds::TOKENS),
    );
    match cache.mode {
        CacheMode::Automatic { step_tokens } => c.range_u(
            &format!("{f}.mode.step_tokens"),
            u64::from(step_tokens),
            1,
            u64::from(bounds::TOKENS),
        ),
        CacheMode::Explicit {
            write_price_multiplier,
        } => c.range_f(
            &format!("{f}.mode.write_price_multiplier"),
            write_price_multiplier,
            1.0,
            10.0,
            "×",
        ),
    }
}
