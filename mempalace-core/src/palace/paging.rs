//! Reading every drawer a filter matches, one page at a time, so memory stays bounded by the
//! page however many drawers match.

use super::Palace;
use crate::drawer::Drawer;
use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::vector_store::Page;

impl Palace {
    /// Hands every drawer matching `filter` to `visit`, `page_size` at a time, until the
    /// drawers run out or `visit` returns false.
    pub(crate) async fn for_each_page(
        &self,
        filter: &DrawerFilter,
        page_size: usize,
        mut visit: impl FnMut(Vec<Drawer>) -> bool,
    ) -> Result<()> {
        let page_size = page_size.max(1);
        let mut offset = 0;
        loop {
            let page = self
                .store
                .list(
                    filter,
                    Page {
                        offset,
                        limit: page_size,
                    },
                )
                .await?;
            let n = page.len();
            offset += n;
            if !visit(page) || n < page_size {
                return Ok(());
            }
        }
    }
}
