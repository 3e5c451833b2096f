"""Renderers: results as terminal tables, JSON, TSV and trec_eval-style text."""
