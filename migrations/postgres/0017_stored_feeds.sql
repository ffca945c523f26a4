-- The reputation feed at epoch boundaries (multiples of `[reputation.trust] interval_blocks`),
-- stored by the indexer once the boundary is final (indexer/src/feeds/keeper.rs), so `serve`
-- hands out a past block's feed by reading it rather than scoring every agent again. A feed is
-- visible once its `reputation_feeds` row is written, after all of its pages; pages without
-- that row are a computation cut short and are cleared before the next one. The newest
-- `[reputation] feeds_kept` feeds of each chain are kept.
CREATE TABLE reputation_feeds (
    chain_id     BIGINT  NOT NULL,
    block_number BIGINT  NOT NULL,
    agents       BIGINT  NOT NULL,  -- lines
    bytes        BIGINT  NOT NULL,  -- body length, every line ending in a newline
    sha256       TEXT    NOT NULL,  -- of the body, lowercase hex
    PRIMARY KEY (chain_id, block_number)
);
-- The body, a run of whole lines per page, pages numbered from 0 in body order.
CREATE TABLE reputation_feed_pages (
    chain_id     BIGINT  NOT NULL,
    block_number BIGINT  NOT NULL,
    page         BIGINT  NOT NULL,
    lines        TEXT    NOT NULL,
    PRIMARY KEY (chain_id, block_number, page)
);
