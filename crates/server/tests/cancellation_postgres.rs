//! Storage operations cut at every await (`cancellation/mod.rs`) on PostgreSQL, and the pool's own net under the guards.

mod cancellation;
#[path = "../../store/tests/shared/mod.rs"]
mod shared;
mod support;
mod tables;

use tables::Kind::Postgres as Pg;

#[tokio::test]
async fn a_cut_claim_is_absent_or_committed() {
    cancellation::a_cut_claim_is_absent_or_committed(Pg).await;
}

#[tokio::test]
async fn a_cut_takeover_keeps_the_old_lease_or_commits_the_new() {
    cancellation::a_cut_takeover_keeps_the_old_lease_or_commits_the_new(Pg).await;
}

#[tokio::test]
async fn a_cut_begin_with_writes_all_three_rows_or_none() {
    cancellation::a_cut_begin_with_writes_all_three_rows_or_none(Pg).await;
}

#[tokio::test]
async fn a_cut_commit_with_saves_and_updates_together_or_not_at_all() {
    cancellation::a_cut_commit_with_saves_and_updates_together_or_not_at_all(Pg).await;
}

#[tokio::test]
async fn a_cut_commit_tx_saves_and_writes_together_or_not_at_all() {
    cancellation::a_cut_commit_tx_saves_and_writes_together_or_not_at_all(Pg).await;
}

#[tokio::test]
async fn a_cut_release_frees_the_key_or_leaves_the_claim() {
    cancellation::a_cut_release_frees_the_key_or_leaves_the_claim(Pg).await;
}

#[tokio::test]
async fn a_cut_process_once_records_the_effect_with_the_id_or_neither() {
    cancellation::a_cut_process_once_records_the_effect_with_the_id_or_neither(Pg).await;
}

#[tokio::test]
async fn a_cut_prune_never_removes_a_live_claim() {
    cancellation::a_cut_prune_never_removes_a_live_claim(Pg).await;
}

#[tokio::test]
async fn the_pool_rolls_back_a_connection_returned_inside_a_transaction() {
    cancellation::the_pool_rolls_back_a_connection_returned_inside_a_transaction().await;
}

#[tokio::test]
async fn a_cut_save_recovery_writes_the_point_or_nothing() {
    cancellation::a_cut_save_recovery_writes_the_point_or_nothing(Pg).await;
}

#[tokio::test]
async fn a_cut_renewal_extends_the_lease_or_leaves_it() {
    cancellation::a_cut_renewal_extends_the_lease_or_leaves_it(Pg).await;
}
