// MemoryOS heat of segment `s` at $now, from its stored counters: alpha·visits + beta·interaction_len +
// gamma·exp(−Δt/mu), Δt in seconds since it was last touched (never negative). Computed when read, so a
// segment nobody touches cools. $heat is TierSettings.heat_params().
($heat.alpha * s.visits + $heat.beta * s.interaction_len
 + $heat.gamma * exp(-CASE WHEN $now > s.last_access
                          THEN (($now.epochMillis - s.last_access.epochMillis) / 1000.0) ELSE 0.0 END / $heat.mu))
