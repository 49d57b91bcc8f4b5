//! The table layer (`columnar::join`): long-run collapse and the golden ⋈ run join, the one
//! implementation behind the CLI's `score` and Python's `collapse_run` / `join_golden`.
#![cfg(feature = "polars")]

use polars::prelude::*;
use polars_rag::columnar::join::{collapse_run, duplicate_ids, join_golden};

fn strings(s: &Series) -> Vec<Option<String>> {
    s.cast(&DataType::String)
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.map(String::from))
        .collect()
}

/// The `id` fields of each row's `retrieved` list.
fn retrieved_ids(frame: &DataFrame) -> Vec<Vec<String>> {
    let lists = frame.column("retrieved").unwrap().list().unwrap().clone();
    (0..lists.len())
        .map(|i| {
            let items = lists.get_as_series(i).unwrap();
            let ids = items.struct_().unwrap().field_by_name("id").unwrap();
            strings(&ids).into_iter().map(Option::unwrap).collect()
        })
        .collect()
}

#[test]
fn a_long_run_is_put_in_rank_order_within_each_query_whatever_its_row_order() {
    // Queries interleaved and each out of rank order: no two neighbouring rows of a query.
    let run = df!(
        "query_id" => ["q2", "q1", "q2", "q1", "q3"],
        "doc_id" => ["b2", "a1", "b1", "a0", "c"],
        "rank" => [Some(2), Some(1), Some(1), None, Some(5)],
        "score" => [0.2, 0.9, 0.8, 1.0, 0.1],
        "system" => ["s-b2", "s-a1", "s-b1", "s-a0", "s-c"],
    )
    .unwrap();
    let collapsed = collapse_run(&run, "query_id").unwrap();
    // Queries in the order of their first row.
    assert_eq!(
        strings(
            collapsed
                .column("query_id")
                .unwrap()
                .as_materialized_series()
        ),
        [Some("q2".into()), Some("q1".into()), Some("q3".into())]
    );
    // Items by rank, a null rank first (as Polars sorts).
    assert_eq!(
        retrieved_ids(&collapsed),
        [vec!["b1", "b2"], vec!["a0", "a1"], vec!["c"]]
    );
    // Other columns: the value of the query's first item after ordering.
    assert_eq!(
        strings(collapsed.column("system").unwrap().as_materialized_series()),
        [Some("s-b1".into()), Some("s-a0".into()), Some("s-c".into())]
    );
    assert!(collapsed.column("rank").is_err() && collapsed.column("doc_id").is_err());
    let fields: Vec<String> = match collapsed.column("retrieved").unwrap().dtype() {
        DataType::List(inner) => match inner.as_ref() {
            DataType::Struct(f) => f.iter().map(|f| f.name().to_string()).collect(),
            other => panic!("{other}"),
        },
        other => panic!("{other}"),
    };
    assert_eq!(fields, ["id", "score"]);
}

#[test]
fn without_rank_a_long_run_keeps_row_order() {
    let run = df!("query_id" => [1i64, 1, 2], "doc_id" => ["x", "y", "z"]).unwrap();
    let collapsed = collapse_run(&run, "query_id").unwrap();
    assert_eq!(retrieved_ids(&collapsed), [vec!["x", "y"], vec!["z"]]);
}

#[test]
fn the_join_keeps_every_golden_row_and_accounts_for_every_run_row() {
    let golden = df!(
        "query_id" => [Some("q1"), Some("q2"), Some("q3"), Some("q3"), None],
        "answer" => ["g1", "g2", "g3", "g3b", "gnull"],
    )
    .unwrap();
    let run = df!(
        "query_id" => [Some("q1"), Some("q1"), Some("zz"), None, Some("q3")],
        "answer" => ["r1", "r1b", "rz", "rnull", "r3"],
    )
    .unwrap();
    let joined = join_golden(&golden, &run, "query_id").unwrap();
    let frame = &joined.frame;
    // q1 twice (two run rows), q2 once without a run row, q3 twice (golden duplicate), null once.
    assert_eq!(
        strings(frame.column("answer").unwrap().as_materialized_series()),
        ["g1", "g1", "g2", "g3", "g3b", "gnull"].map(|s| Some(s.to_string()))
    );
    assert_eq!(
        strings(frame.column("answer_run").unwrap().as_materialized_series()),
        [Some("r1"), Some("r1b"), None, Some("r3"), Some("r3"), None].map(|s| s.map(String::from))
    );
    let in_run: Vec<Option<bool>> = frame
        .column("in_run")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(
        in_run,
        [true, true, false, true, true, false].map(Some).to_vec()
    );
    assert_eq!(strings(&joined.missing), [Some("q2".into()), None]);
    // The unknown id and the null id: every run row is joined or reported.
    assert_eq!(strings(&joined.unknown), [Some("zz".into()), None]);
    assert_eq!(strings(&joined.duplicate_golden), [Some("q3".into())]);
    assert_eq!(strings(&joined.duplicate_run), [Some("q1".into())]);
}

#[test]
fn integer_ids_of_different_widths_join_and_other_dtypes_are_refused_by_name() {
    let golden = df!("query_id" => [1i32, 2], "reference" => ["a", "b"]).unwrap();
    let run = df!("query_id" => [2u8, 1], "answer" => ["b", "a"]).unwrap();
    let joined = join_golden(&golden, &run, "query_id").unwrap();
    assert_eq!(
        joined.frame.column("query_id").unwrap().dtype(),
        &DataType::Int64
    );
    assert_eq!(
        strings(
            joined
                .frame
                .column("answer")
                .unwrap()
                .as_materialized_series()
        ),
        [Some("a".into()), Some("b".into())]
    );
    let text_ids = df!("query_id" => ["1", "2"], "answer" => ["a", "b"]).unwrap();
    let e = join_golden(&golden, &text_ids, "query_id")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("golden column 'query_id' has dtype i32")
            && e.contains("run column 'query_id' has dtype str"),
        "{e}"
    );
    let e = join_golden(&golden, &df!("qid" => [1i32]).unwrap(), "query_id")
        .unwrap_err()
        .to_string();
    assert!(e.contains("run: no id column 'query_id'"), "{e}");
}

#[test]
fn a_long_run_is_collapsed_before_the_join() {
    let golden = df!("query_id" => ["q1", "q2"]).unwrap();
    let run = df!("query_id" => ["q1", "q1"], "doc_id" => ["b", "a"], "rank" => [2, 1]).unwrap();
    let joined = join_golden(&golden, &run, "query_id").unwrap();
    assert_eq!(joined.frame.height(), 2);
    let lists = joined
        .frame
        .column("retrieved")
        .unwrap()
        .list()
        .unwrap()
        .clone();
    let first = lists.get_as_series(0).unwrap();
    assert_eq!(
        strings(&first.struct_().unwrap().field_by_name("id").unwrap()),
        [Some("a".into()), Some("b".into())]
    );
    assert!(lists.get_as_series(1).is_none(), "q2 has no run row");
    assert!(duplicate_ids(&run, "run", "query_id").unwrap().len() == 1);
}

#[test]
fn a_run_in_golden_order_joins_as_one_in_another_order() {
    let golden = df!("query_id" => ["q1", "q2", "q3"], "g" => [1, 2, 3]).unwrap();
    let in_order = df!("query_id" => ["q1", "q2", "q3"], "answer" => ["a", "b", "c"]).unwrap();
    let shuffled = df!("query_id" => ["q3", "q1", "q2"], "answer" => ["c", "a", "b"]).unwrap();
    let a = join_golden(&golden, &in_order, "query_id").unwrap().frame;
    let b = join_golden(&golden, &shuffled, "query_id").unwrap().frame;
    assert!(a.equals_missing(&b), "{a}\n{b}");
    assert_eq!(
        strings(a.column("answer").unwrap().as_materialized_series()),
        [Some("a".into()), Some("b".into()), Some("c".into())]
    );
}
