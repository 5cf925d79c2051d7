import streamlit as st

st.title("Decisions")
st.info("This page is being built.")
