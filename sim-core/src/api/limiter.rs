//! The limiters: exact integer token buckets (OpenAI, Anthropic with output
//! refunds, Gemini) and Azure's fixed windows, and daily caps in fixed
//! windows of a day.

use super::{LimitStyle, MINUTE_NS, RateLimits};

/// A token bucket holding at most `capacity` units, refilled continuously at
/// `capacity` per minute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    capacity: u64,
    /// Level × 60·10⁹ (units · ns per minute).
    level_scaled: u128,
    last_ns: u64,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(capacity: u64) -> Self {
        TokenBucket {
            capacity,
            level_scaled: u128::from(capacity) * MINUTE_NS,
            last_ns: 0,
        }
    }

    /// Capacity.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    fn refill(&mut self, now: u64) {
        if now > self.last_ns {
            let full = u128::from(self.capacity) * MINUTE_NS;
            let added = u128::from(self.capacity) * u128::from(now - self.last_ns);
            self.level_scaled = (self.level_scaled + added).min(full);
            self.last_ns = now;
        }
    }

    /// Units available at `now`.
    pub fn level(&mut self, now: u64) -> f64 {
        self.refill(now);
        self.level_scaled as f64 / MINUTE_NS as f64
    }

    /// Nanoseconds until `cost` units are available (0 if they are now).
    pub fn wait_ns(&mut self, now: u64, cost: u64) -> u64 {
        self.refill(now);
        let need = u128::from(cost) * MINUTE_NS;
        if self.level_scaled >= need {
            0
        } else if self.capacity == 0 {
            u64::MAX
        } else {
            let deficit = need - self.level_scaled;
            u64::try_from(deficit.div_ceil(u128::from(self.capacity))).unwrap_or(u64::MAX)
        }
    }

    /// Remove `cost` units (call only after `wait_ns` returned 0).
    pub fn take(&mut self, now: u64, cost: u64) {
        self.refill(now);
        debug_assert!(
            self.level_scaled >= u128::from(cost) * MINUTE_NS,
            "took {cost} units from a bucket holding fewer"
        );
        self.level_scaled = self
            .level_scaled
            .saturating_sub(u128::from(cost) * MINUTE_NS);
    }

    /// Return `amount` units (a refund), never above capacity.
    pub fn give(&mut self, now: u64, amount: u64) {
        self.refill(now);
        let full = u128::from(self.capacity) * MINUTE_NS;
        self.level_scaled = (self.level_scaled + u128::from(amount) * MINUTE_NS).min(full);
    }
}

/// A fixed-window counter: at most `allowance` units per window of `window_ns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedWindow {
    window_ns: u64,
    allowance: u64,
    used: u64,
    index: u64,
}

impl FixedWindow {
    /// An empty window.
    pub fn new(window_ns: u64, allowance: u64) -> Self {
        FixedWindow {
            window_ns: window_ns.max(1),
            allowance,
            used: 0,
            index: 0,
        }
    }

    fn roll(&mut self, now: u64) {
        let i = now / self.window_ns;
        if i != self.index {
            self.index = i;
            self.used = 0;
        }
    }

    /// Nanoseconds until `cost` fits (0 if it does now).
    pub fn wait_ns(&mut self, now: u64, cost: u64) -> u64 {
        self.roll(now);
        if self.used + cost <= self.allowance {
            0
        } else if cost > self.allowance {
            u64::MAX
        } else {
            (self.index + 1) * self.window_ns - now
        }
    }

    /// Count `cost` units in the current window.
    pub fn take(&mut self, now: u64, cost: u64) {
        self.roll(now);
        self.used += cost;
    }

    /// Fraction of the window's allowance left.
    pub fn fill(&mut self, now: u64) -> f64 {
        self.roll(now);
        if self.allowance == 0 {
            0.0
        } else {
            1.0 - self.used as f64 / self.allowance as f64
        }
    }
}

/// What one admitted request was charged, for refunds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Charge {
    /// Output tokens reserved at admission (Anthropic refunds the unused part).
    pub output_reserved: u64,
    /// Admitted on the tier's provisioned units, outside its rate limits.
    pub provisioned: bool,
}

/// The enforcement state of one tier's limits: its per-minute limits, and
/// its daily caps if it has any.
#[derive(Clone, Debug, PartialEq)]
pub struct Limiter {
    minute: Minute,
    daily: Option<Daily>,
    max_concurrent: u64,
}

/// The `retry-after` of a 429 for too many requests at once, ns: providers
/// give none, and a request finishing frees room at no time they announce.
/// An assumption (`docs/api.md`).
pub const CONCURRENCY_RETRY_NS: u64 = 1_000_000_000;

/// Requests and tokens per day, in fixed windows of 24 hours from the run's
/// start (the run starts at midnight, the providers' reset): tokens counted
/// as the tier's TPM counts them.
#[derive(Clone, Debug, PartialEq)]
struct Daily {
    requests: Option<FixedWindow>,
    tokens: Option<FixedWindow>,
}

/// A day, ns.
const DAY_NS: u64 = 86_400 * 1_000_000_000;

impl Daily {
    fn new(limits: &RateLimits, m: u64) -> Option<Daily> {
        let window = |cap: u64| (cap > 0).then(|| FixedWindow::new(DAY_NS, cap.saturating_mul(m)));
        let d = Daily {
            requests: window(limits.rpd),
            tokens: window(limits.tpd),
        };
        (d.requests.is_some() || d.tokens.is_some()).then_some(d)
    }

    /// Nanoseconds until a request of `cost` tokens fits today's caps.
    fn wait_ns(&mut self, now: u64, cost: u64) -> u64 {
        let r = self.requests.as_mut().map_or(0, |w| w.wait_ns(now, 1));
        let t = self.tokens.as_mut().map_or(0, |w| w.wait_ns(now, cost));
        r.max(t)
    }

    fn take(&mut self, now: u64, cost: u64) {
        if let Some(w) = self.requests.as_mut() {
            w.take(now, 1);
        }
        if let Some(w) = self.tokens.as_mut() {
            w.take(now, cost);
        }
    }
}

/// The per-minute limits as each provider enforces them.
#[derive(Clone, Debug, PartialEq)]
enum Minute {
    /// Continuous token buckets (OpenAI, Anthropic, Gemini).
    Buckets {
        /// Style whose costs apply.
        style: LimitStyle,
        /// Requests.
        requests: TokenBucket,
        /// Tokens (input + max_tokens, or input only).
        tokens: TokenBucket,
        /// Anthropic's output tokens.
        output: Option<TokenBucket>,
    },
    /// Azure's fixed 10-second windows.
    Windows {
        /// Requests per window.
        requests: FixedWindow,
        /// Tokens per window.
        tokens: FixedWindow,
    },
}

impl Limiter {
    /// The limiter of `limits` with every limit multiplied by `multiplier`.
    pub fn new(limits: &RateLimits, multiplier: u32) -> Limiter {
        let m = u64::from(multiplier.max(1));
        Limiter {
            minute: Minute::new(limits, m),
            daily: Daily::new(limits, m),
            max_concurrent: limits.max_concurrent.saturating_mul(m),
        }
    }

    /// Requests the tier holds at once (0: no limit).
    pub fn max_concurrent(&self) -> u64 {
        self.max_concurrent
    }

    /// The token cost counted against the (input) TPM for a request.
    pub fn token_cost(style: LimitStyle, input: u64, max_tokens: u64) -> u64 {
        match style {
            LimitStyle::OpenAi | LimitStyle::Azure => input + max_tokens,
            LimitStyle::Anthropic | LimitStyle::Gemini => input,
        }
    }

    /// Whether a request of this size could ever be admitted; if not, which limit
    /// it exceeds and by how much.
    pub fn fits(&self, input: u64, max_tokens: u64) -> Result<(), String> {
        self.minute.fits(input, max_tokens)?;
        if let Some(w) = self.daily.as_ref().and_then(|d| d.tokens.as_ref()) {
            let cost = Self::token_cost(self.minute.style(), input, max_tokens);
            if cost > w.allowance {
                return Err(format!(
                    "{cost} tokens exceed the daily token limit of {}",
                    w.allowance
                ));
            }
        }
        Ok(())
    }

    /// Admit a request now, or say how long until it would be (`retry-after`):
    /// until the next minute's room, or, once a daily cap is spent, until the
    /// next day.
    pub fn try_admit(&mut self, now: u64, input: u64, max_tokens: u64) -> Result<Charge, u64> {
        let cost = Self::token_cost(self.minute.style(), input, max_tokens);
        if let Some(d) = self.daily.as_mut() {
            let wait = d.wait_ns(now, cost);
            if wait > 0 {
                return Err(wait);
            }
        }
        let charge = self.minute.try_admit(now, input, max_tokens)?;
        if let Some(d) = self.daily.as_mut() {
            d.take(now, cost);
        }
        Ok(charge)
    }

    /// At completion: refund the unused output reservation (Anthropic).
    pub fn settle(&mut self, now: u64, charge: Charge, output_used: u64) {
        self.minute.settle(now, charge, output_used);
    }

    /// Fraction of the token limit currently available (bucket level or window room).
    pub fn token_fill(&mut self, now: u64) -> f64 {
        self.minute.token_fill(now)
    }

    /// The token limit per minute (for TPM use).
    pub fn tokens_per_minute(&self) -> u64 {
        self.minute.tokens_per_minute()
    }
}

impl Minute {
    fn new(limits: &RateLimits, m: u64) -> Minute {
        match limits.style {
            LimitStyle::Azure => {
                let tpm = limits.tpm.saturating_mul(m);
                // 6 RPM per 1,000 TPM, both enforced per 10 s (a sixth of a minute).
                let rpm = tpm * 6 / 1000;
                Minute::Windows {
                    requests: FixedWindow::new(10_000_000_000, rpm / 6),
                    tokens: FixedWindow::new(10_000_000_000, tpm / 6),
                }
            }
            style => Minute::Buckets {
                style,
                requests: TokenBucket::new(limits.rpm.saturating_mul(m)),
                tokens: TokenBucket::new(limits.tpm.saturating_mul(m)),
                output: (style == LimitStyle::Anthropic)
                    .then(|| TokenBucket::new(limits.output_tpm.saturating_mul(m))),
            },
        }
    }

    /// Whose semantics apply.
    fn style(&self) -> LimitStyle {
        match self {
            Minute::Buckets { style, .. } => *style,
            Minute::Windows { .. } => LimitStyle::Azure,
        }
    }

    fn fits(&self, input: u64, max_tokens: u64) -> Result<(), String> {
        match self {
            Minute::Buckets {
                style,
                tokens,
                output,
                ..
            } => {
                let cost = Limiter::token_cost(*style, input, max_tokens);
                if cost > tokens.capacity() {
                    return Err(format!(
                        "{cost} tokens exceed the TPM limit of {}",
                        tokens.capacity()
                    ));
                }
                if let Some(o) = output
                    && max_tokens > o.capacity()
                {
                    return Err(format!(
                        "max_tokens {max_tokens} exceeds the output TPM limit of {}",
                        o.capacity()
                    ));
                }
                Ok(())
            }
            Minute::Windows { tokens, requests } => {
                let cost = input + max_tokens;
                if requests.allowance == 0 {
                    return Err("the TPM limit allows no request per 10-second window".into());
                }
                if cost > tokens.allowance {
                    return Err(format!(
                        "{cost} tokens exceed the {} tokens a 10-second window allows",
                        tokens.allowance
                    ));
                }
                Ok(())
            }
        }
    }

    fn try_admit(&mut self, now: u64, input: u64, max_tokens: u64) -> Result<Charge, u64> {
        match self {
            Minute::Buckets {
                style,
                requests,
                tokens,
                output,
            } => {
                let cost = Limiter::token_cost(*style, input, max_tokens);
                let mut wait = requests.wait_ns(now, 1).max(tokens.wait_ns(now, cost));
                if let Some(o) = output.as_mut() {
                    wait = wait.max(o.wait_ns(now, max_tokens));
                }
                if wait > 0 {
                    return Err(wait);
                }
                requests.take(now, 1);
                tokens.take(now, cost);
                let mut charge = Charge::default();
                if let Some(o) = output.as_mut() {
                    o.take(now, max_tokens);
                    charge.output_reserved = max_tokens;
                }
                Ok(charge)
            }
            Minute::Windows { requests, tokens } => {
                let cost = input + max_tokens;
                let wait = requests.wait_ns(now, 1).max(tokens.wait_ns(now, cost));
                if wait > 0 {
                    return Err(wait);
                }
                requests.take(now, 1);
                tokens.take(now, cost);
                Ok(Charge::default())
            }
        }
    }

    fn settle(&mut self, now: u64, charge: Charge, output_used: u64) {
        if let Minute::Buckets {
            output: Some(o), ..
        } = self
        {
            o.give(now, charge.output_reserved.saturating_sub(output_used));
        }
    }

    fn token_fill(&mut self, now: u64) -> f64 {
        match self {
            Minute::Buckets { tokens, .. } => {
                let cap = tokens.capacity();
                if cap == 0 {
                    0.0
                } else {
                    tokens.level(now) / cap as f64
                }
            }
            Minute::Windows { tokens, .. } => tokens.fill(now),
        }
    }

    fn tokens_per_minute(&self) -> u64 {
        match self {
            Minute::Buckets { tokens, .. } => tokens.capacity(),
            Minute::Windows { tokens, .. } => tokens.allowance * 6,
        }
    }
}
