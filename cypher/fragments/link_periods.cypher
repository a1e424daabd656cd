// A link's period bounds (models.Link.periods), oldest first: the `periods` it keeps or, for a link made before
// links kept them, its creation and its invalidation if any. The relationship must be called `r`.
coalesce(r.periods, [r.created_at] + CASE WHEN r.invalid_at IS NULL THEN [] ELSE [r.invalid_at] END)
