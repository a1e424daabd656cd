// A tenant's segments are scanned exactly (at most AMEM_SEGMENT_CAPACITY are active): no vector index needed.
CREATE RANGE INDEX segment_tenant IF NOT EXISTS FOR (s:Segment) ON (s.tenant)
