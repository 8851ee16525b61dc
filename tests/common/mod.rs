pub mod shipped;
