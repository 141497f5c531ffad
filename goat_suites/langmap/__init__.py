"""LangMap (HieraNav): the annotation file loader, the procedural generator and the suite run."""
