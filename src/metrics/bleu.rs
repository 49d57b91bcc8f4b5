//! sacrebleu 2.6.0 BLEU.
