//! Each row's namespace path, kept compactly: a recorded shape of a 32 GiB PoRep
//! partition has 130 M rows, and a path string per row would hold more memory
//! than its matrices. Paths are a tree of namespace nodes with interned names,
//! and a row is its node plus its interned annotation; the path string is built
//! only when a row is named in an error.

use std::collections::HashMap;

/// No node: the root namespace.
const ROOT: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub(crate) struct RowNames {
    /// Distinct namespace names and annotations.
    strings: Vec<String>,
    index: HashMap<String, u32>,
    /// Namespace nodes, as (parent node or ROOT, name).
    nodes: Vec<(u32, u32)>,
    /// Per row: (namespace node or ROOT, annotation).
    rows: Vec<(u32, u32)>,
    /// The open namespaces' node, innermost last.
    open: Vec<u32>,
}

impl RowNames {
    fn intern(&mut self, s: String) -> u32 {
        if let Some(&id) = self.index.get(&s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.clone());
        self.index.insert(s, id);
        id
    }

    fn current(&self) -> u32 {
        self.open.last().copied().unwrap_or(ROOT)
    }

    pub(crate) fn push_namespace(&mut self, name: String) {
        let name = self.intern(name);
        let node = self.nodes.len() as u32;
        self.nodes.push((self.current(), name));
        self.open.push(node);
    }

    pub(crate) fn pop_namespace(&mut self) {
        self.open.pop();
    }

    /// Names the next row `annotation` inside the open namespaces.
    pub(crate) fn push_row(&mut self, annotation: String) {
        let annotation = self.intern(annotation);
        self.rows.push((self.current(), annotation));
    }

    /// Drops what only recording needs.
    pub(crate) fn finish(&mut self) {
        self.index = HashMap::new();
        self.open = Vec::new();
        self.nodes.shrink_to_fit();
        self.rows.shrink_to_fit();
    }

    /// The path of `row` ("outer/inner/annotation"), as `row_path` writes it for a
    /// directly synthesized circuit.
    pub(crate) fn get(&self, row: usize) -> Option<String> {
        let &(mut node, annotation) = self.rows.get(row)?;
        let mut namespaces = vec![];
        while node != ROOT {
            let (parent, name) = self.nodes[node as usize];
            namespaces.push(self.strings[name as usize].clone());
            node = parent;
        }
        namespaces.reverse();
        Some(super::row_path(
            &namespaces,
            self.strings[annotation as usize].clone(),
        ))
    }

    /// The interned names, the namespace nodes and the rows, as kept.
    #[allow(clippy::type_complexity)]
    pub(crate) fn parts(&self) -> (&[String], &[(u32, u32)], &[(u32, u32)]) {
        (&self.strings, &self.nodes, &self.rows)
    }

    /// Row names from [`Self::parts`], every index checked.
    pub(crate) fn from_parts(
        strings: Vec<String>,
        nodes: Vec<(u32, u32)>,
        rows: Vec<(u32, u32)>,
    ) -> Result<Self, String> {
        let name_ok = |i: u32| (i as usize) < strings.len();
        let node_ok = |i: u32| i == ROOT || (i as usize) < nodes.len();
        // A node's parent comes before it, so that a path ends at the root.
        let nodes_ok = nodes
            .iter()
            .enumerate()
            .all(|(i, &(parent, name))| name_ok(name) && (parent == ROOT || (parent as usize) < i));
        if !nodes_ok
            || !rows
                .iter()
                .all(|&(node, name)| node_ok(node) && name_ok(name))
        {
            return Err("row names index past their tables".into());
        }
        Ok(RowNames {
            strings,
            index: HashMap::new(),
            nodes,
            rows,
            open: Vec::new(),
        })
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let strings: usize = self.strings.iter().map(|s| s.capacity() + 24).sum();
        strings + (self.nodes.capacity() + self.rows.capacity()) * 8 + self.open.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_the_circuit_named_them() {
        let mut n = RowNames::default();
        n.push_row("top".into());
        n.push_namespace("outer".into());
        n.push_namespace("inner".into());
        n.push_row("a".into());
        n.pop_namespace();
        n.push_row("a".into());
        n.push_namespace("".into());
        n.push_row("b".into());
        n.pop_namespace();
        n.pop_namespace();
        n.push_row("".into());
        n.finish();
        assert_eq!(n.get(0).as_deref(), Some("top"));
        assert_eq!(n.get(1).as_deref(), Some("outer/inner/a"));
        assert_eq!(n.get(2).as_deref(), Some("outer/a"));
        assert_eq!(
            n.get(3).as_deref(),
            Some("outer//b"),
            "as row_path joins them"
        );
        assert_eq!(n.get(4).as_deref(), Some(""));
        assert_eq!(n.get(5), None);
        assert_eq!(n.strings.len(), 6, "names interned once");
    }
}
