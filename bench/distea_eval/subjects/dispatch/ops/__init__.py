"""Operations of the dispatch subject."""
