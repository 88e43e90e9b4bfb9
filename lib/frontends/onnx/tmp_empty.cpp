namespace collage {}
