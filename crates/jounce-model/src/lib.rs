//! jounce-model (skeleton)
