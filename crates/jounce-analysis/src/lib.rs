//! jounce-analysis (skeleton)
