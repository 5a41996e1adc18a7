pub mod canonical;
