package prompt

// Raw exposes a catalog's unrendered templates to the tests.
func (c *Catalog) Raw(k Key) (string, bool) {
	t, ok := c.texts[k]
	return t, ok
}

var ChineseReasons = chineseReasons
